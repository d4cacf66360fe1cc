import {
  HELD_SPEC_ANNOTATION,
  QUIESCED_ANNOTATION,
  ORIGIN_CREATED_ANNOTATION,
  ORIGIN_UID_ANNOTATION,
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
} from '@cellfed/api';
import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { isCellOwnObject } from '@cellfed/federation';

import { copyForNewCell } from './object-copy.ts';

const meta = {
  name: 'x',
  namespace: 'ns',
  uid: 'u1',
  resourceVersion: '7',
  generation: 3,
  creationTimestamp: '2026-01-01T00:00:00Z',
  labels: { [REBALANCE_STATUS_LABEL]: 'migrating' },
  annotations: { [FENCED_AT_ANNOTATION]: 'now' },
};

describe('copyForNewCell', () => {
  it('drops server fields and migration marks, marks the source, and splits off the status', () => {
    const copy = copyForNewCell(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: { a: '1' }, status: { s: 1 } },
      { resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'ns', name: 'x' },
      'cell-1',
    );
    expect(copy.object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'x',
        namespace: 'ns',
        annotations: {
          [COPIED_FROM_ANNOTATION]: 'cell-1/u1',
          [ORIGIN_UID_ANNOTATION]: 'u1',
          [ORIGIN_CREATED_ANNOTATION]: '2026-01-01T00:00:00Z',
        },
      },
      data: { a: '1' },
    });
    expect(copy.status).toEqual({ s: 1 });
  });

  it('lets the new cell allocate a Service’s cluster IPs, except a headless one', () => {
    const services = {
      resource: { group: '', version: 'v1', resource: 'services' },
      namespace: 'ns',
      name: 'x',
    };
    const spec = (clusterIP: string) =>
      copyForNewCell(
        { metadata: meta, spec: { clusterIP, clusterIPs: [clusterIP], ports: [] } },
        services,
        'c',
      ).object.spec;
    expect(spec('10.0.0.9')).toEqual({ ports: [] });
    expect(spec('None')).toEqual({ clusterIP: 'None', clusterIPs: ['None'], ports: [] });
  });

  it('drops a Job’s generated selector and the old uid in its template, unless the selector is manual', () => {
    const jobs = {
      resource: { group: 'batch', version: 'v1', resource: 'jobs' },
      namespace: 'ns',
      name: 'x',
    };
    const job = (manualSelector: boolean) => ({
      metadata: meta,
      spec: {
        manualSelector,
        selector: { matchLabels: { 'controller-uid': 'u1' } },
        template: {
          metadata: {
            labels: { 'controller-uid': 'u1', 'batch.kubernetes.io/controller-uid': 'u1', app: 'x' },
          },
        },
      },
    });
    expect(copyForNewCell(job(false), jobs, 'c').object.spec).toEqual({
      manualSelector: false,
      template: { metadata: { labels: { app: 'x' } } },
      suspend: true,
    });
    expect(copyForNewCell(job(true), jobs, 'c').object.spec).toEqual({ ...job(true).spec, suspend: true });
  });

  it('creates a Job or CronJob suspended, recording what the commit sets back; a suspended one as it is', () => {
    const cronJobs = {
      resource: { group: 'batch', version: 'v1', resource: 'cronjobs' },
      namespace: 'ns',
      name: 'x',
    };
    const cronJob = (suspend?: boolean) => ({
      metadata: { ...meta, annotations: { [QUIESCED_ANNOTATION]: '{"suspend":false}', note: 'n' } },
      spec: { schedule: '0 3 * * *', ...(suspend === undefined ? {} : { suspend }) },
    });
    const running = copyForNewCell(cronJob(), cronJobs, 'c').object;
    expect(running.spec).toEqual({ schedule: '0 3 * * *', suspend: true });
    // An old copy's own record of a quiesce is not carried over: only what this copy holds back.
    expect(running.metadata.annotations?.[HELD_SPEC_ANNOTATION]).toBe('{"suspend":null}');
    expect(running.metadata.annotations?.[QUIESCED_ANNOTATION]).toBeUndefined();
    expect(running.metadata.annotations?.['note']).toBe('n');
    expect(
      copyForNewCell(cronJob(false), cronJobs, 'c').object.metadata.annotations?.[HELD_SPEC_ANNOTATION],
    ).toBe('{"suspend":false}');
    const paused = copyForNewCell(cronJob(true), cronJobs, 'c').object;
    expect(paused.spec).toEqual({ schedule: '0 3 * * *', suspend: true });
    expect(paused.metadata.annotations?.[HELD_SPEC_ANNOTATION]).toBeUndefined();
    // An uncommitted copy held already moves on with its record, so the last commit still restores it.
    const held = {
      ...cronJob(true),
      metadata: { ...meta, annotations: { [HELD_SPEC_ANNOTATION]: '{"suspend":null}' } },
    };
    expect(copyForNewCell(held, cronJobs, 'c').object.metadata.annotations?.[HELD_SPEC_ANNOTATION]).toBe(
      '{"suspend":null}',
    );
  });
});

describe('isCellOwnObject', () => {
  const core = (resource: string, namespace: string, name: string) => ({
    resource: { group: '', version: 'v1', resource },
    namespace,
    name,
  });
  it('names what every cell makes for itself', () => {
    expect(isCellOwnObject(core('configmaps', 'any', 'kube-root-ca.crt'))).toBe(true);
    expect(isCellOwnObject(core('services', 'default', 'kubernetes'))).toBe(true);
    expect(isCellOwnObject(core('services', 'shop', 'kubernetes'))).toBe(false);
    expect(isCellOwnObject(core('configmaps', 'any', 'app'))).toBe(false);
  });
});
