import { parseRequestInfo } from '../request/request-info.ts';
import { isLongRunning } from './long-running.ts';

describe('isLongRunning', () => {
  const longRunning = (method: string, target: string, headers: Record<string, string> = {}) => {
    const info = parseRequestInfo(method, target);
    if (typeof info === 'string') throw new Error(info);
    return isLongRunning({ headers }, info);
  };

  it.each([
    ['GET', '/api/v1/namespaces/a/configmaps?watch=1'],
    ['GET', '/api/v1/namespaces/a/configmaps?watch=True'],
    ['GET', '/api/v1/namespaces/a/configmaps?watch='],
    ['GET', '/api/v1/watch/namespaces/a/configmaps'],
    // Every log, followed or not, as kube-apiserver counts it: a follow is read as any boolean is.
    ['GET', '/api/v1/namespaces/a/pods/p/log'],
    ['GET', '/api/v1/namespaces/a/pods/p/log?follow=True'],
    ['GET', '/api/v1/namespaces/a/services/s/proxy/metrics'],
    ['POST', '/api/v1/namespaces/a/pods/p/exec?command=sh'],
    ['GET', '/api/v1/namespaces/a/pods/p/portforward'],
  ])('counts %s %s as long-running, as kube-apiserver does', (method, target) => {
    expect(longRunning(method, target)).toBe(true);
  });

  it.each([
    ['GET', '/api/v1/namespaces/a/configmaps'],
    ['GET', '/api/v1/namespaces/a/configmaps?watch=false'],
    ['GET', '/api/v1/namespaces/a/configmaps?watch=0'],
    ['GET', '/api/v1/namespaces/a/pods/p'],
    ['PATCH', '/api/v1/namespaces/a/pods/p/status'],
    ['GET', '/version'],
  ])('counts %s %s as a plain request', (method, target) => {
    expect(longRunning(method, target)).toBe(false);
  });

  it('counts any request asking for an upgrade as long-running', () => {
    expect(longRunning('GET', '/version', { upgrade: 'websocket' })).toBe(true);
  });
});
