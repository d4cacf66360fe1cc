import { ORPHANED_DEPENDENTS_REASON } from '@cellfed/api';
import { Readable } from 'node:stream';

import { type EventSubject, type KubeClient } from '@cellfed/controller-kit';

import { parseRequestInfo, type ResourceRequestInfo } from '../request/request-info.ts';
import { refusal } from '../routing/destination.ts';
import { forbidden } from '../status/kube-status.ts';
import { readyControlPlaneDelete } from './control-plane-deletes.ts';
import { type ClientRequest } from '../server/client-request.ts';
import { RequestBody } from '../server/request-body.ts';

const ACCOUNT = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder', uid: 'sa-1' } };

function setup(options: { readable?: boolean; recordFails?: boolean; mayDelete?: boolean } = {}) {
  const recorded: { subject: EventSubject; reason: string }[] = [];
  const reads: string[] = [];
  const controlPlane = {
    raw: (_method: string, path: string) => {
      reads.push(path);
      const status = options.readable === false ? 403 : 200;
      return Promise.resolve({
        statusCode: status,
        body: { json: () => Promise.resolve(ACCOUNT), dump: () => Promise.resolve() },
      });
    },
  } as unknown as KubeClient;
  const recorder = {
    write: (subject: EventSubject, _type: string, reason: string) => {
      if (options.recordFails) return Promise.reject(new Error('events are forbidden'));
      recorded.push({ subject, reason });
      return Promise.resolve();
    },
  };
  const ready = (target: string, body?: string) => {
    const request = Object.assign(Readable.from(body ? [Buffer.from(body)] : []), {
      url: target,
      method: 'DELETE',
      headers: body ? { 'content-length': String(body.length) } : {},
    }) as unknown as ClientRequest;
    return readyControlPlaneDelete(
      { controlPlane, recorder, maxBodyBytes: 1024 },
      parseRequestInfo('DELETE', target) as ResourceRequestInfo,
      request,
      (limit) => new RequestBody(request, { unauthorizedBytes: Infinity }, [], allowed).read(limit),
      { 'Impersonate-User': 'alice' },
      () =>
        Promise.resolve(
          options.mayDelete === false
            ? refusal(forbidden('serviceaccounts "builder" is forbidden'), 'forbidden')
            : undefined,
        ),
      new AbortController().signal,
    );
  };
  return { ready, recorded, reads };
}

const PATH = '/api/v1/namespaces/shop/serviceaccounts/builder';

const allowed = () => Promise.resolve(undefined);

describe('readyControlPlaneDelete', () => {
  it.each([
    [`${PATH}?propagationPolicy=Orphan`, undefined],
    [`${PATH}?orphanDependents=true`, undefined],
    [PATH, '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Orphan"}'],
  ])('records the orphaning of %s as an Event on the object before the delete', async (target, body) => {
    const { ready, recorded, reads } = setup();
    const answer = await ready(target, body);
    expect(answer).toEqual({ body: body ? { bytes: Buffer.from(body) } : undefined });
    expect(reads).toEqual([PATH]);
    expect(recorded).toEqual([
      {
        subject: {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          name: 'builder',
          namespace: 'shop',
          uid: 'sa-1',
        },
        reason: ORPHANED_DEPENDENTS_REASON,
      },
    ]);
  });

  it('records nothing for a background or foreground delete, and reads nothing', async () => {
    const { ready, recorded, reads } = setup();
    expect(await ready(PATH)).toEqual({ body: undefined });
    expect(await ready(`${PATH}?propagationPolicy=Foreground`)).toEqual({ body: undefined });
    expect([recorded, reads]).toEqual([[], []]);
  });

  it('lets the delete answer for itself when the caller may not read the object', async () => {
    const { ready, recorded } = setup({ readable: false });
    expect(await ready(`${PATH}?propagationPolicy=Orphan`)).toEqual({ body: undefined });
    expect(recorded).toEqual([]);
  });

  it('records nothing for a caller who may read the object but not delete it: the control plane refuses it', async () => {
    const { ready, recorded } = setup({ mayDelete: false });
    expect(await ready(`${PATH}?propagationPolicy=Orphan`)).toEqual({ body: undefined });
    expect(recorded).toEqual([]);
  });

  it('refuses the delete with a 503 the caller retries when the record cannot be written', async () => {
    const { ready } = setup({ recordFails: true });
    expect(await ready(`${PATH}?propagationPolicy=Orphan`)).toMatchObject({
      kind: 'refuse',
      status: { code: 503, details: { retryAfterSeconds: 1 } },
    });
  });
});
