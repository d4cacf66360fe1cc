import { PROTOBUF } from '@cellfed/federation';

import { shownVersion } from './source-versions.ts';
import { parseCellSetSpec } from '@cellfed/api';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';

import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { routingState } from '../routing/route-plan.ts';
import { decodeCellVersions } from './cell-versions.ts';
import { serveMergedList } from './merged-list.ts';
import { encodeProtobufList, parseProtobufList } from './protobuf-list.ts';
import { protobufItem } from '../testing/protobuf-item.ts';
import type { StreamedAnswer } from './streamed-answer.ts';

type Meta = {
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  creationTimestamp?: string;
  ownerReferences?: { name: string; controller?: boolean }[];
};

/**
 * A cell's apiserver, listing `objects` sorted by namespace/name, paged with continue tokens shaped as
 * kube-apiserver's (the storage key to start after), as Tables if asked. `served` counts items answered.
 */
function fakeCell(resourceVersion: string, objects: Meta[], requests: string[] = []) {
  const sorted = [...objects].sort((a, b) =>
    `${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1,
  );
  const fake = {
    requests,
    served: 0,
    raw: async (
      _method: string,
      target: string,
      options: { headers?: Record<string, string | string[]> } = {},
    ) => {
      requests.push(target);
      const url = new URL(target, 'http://x');
      const params = url.searchParams;
      // As kube-apiserver: the storage key below the list's prefix.
      const key = (meta: Meta) =>
        url.pathname.includes('/namespaces/') ? `/${meta.name}` : `${meta.namespace}/${meta.name}`;
      const limit = Number(params.get('limit') ?? 0) || sorted.length;
      const token = params.get('continue');
      const start = token ? JSON.parse(Buffer.from(token, 'base64url').toString()).start : undefined;
      const selector = params.get('labelSelector');
      const onlyName = /(?:^|,)metadata\.name=([^,]+)/.exec(params.get('fieldSelector') ?? '')?.[1];
      const matching = (
        selector
          ? sorted.filter((meta) => meta.labels?.[selector.split('=')[0]!] === selector.split('=')[1])
          : sorted
      ).filter((meta) => onlyName === undefined || meta.name === onlyName);
      const offset = start ? matching.filter((meta) => `${key(meta)}\u0000` <= start).length : 0;
      const page = matching.slice(offset, offset + limit);
      fake.served += page.length;
      const more = offset + limit < matching.length;
      const next = () =>
        Buffer.from(
          JSON.stringify({
            v: 'meta.k8s.io/v1',
            rv: Number(resourceVersion),
            start: `${key(page.at(-1)!)}\u0000`,
          }),
        ).toString('base64url');
      if (String(options.headers?.accept ?? '') === PROTOBUF) {
        const bytes = encodeProtobufList({
          kind: 'ConfigMapList',
          apiVersion: 'v1',
          resourceVersion,
          continue: more ? next() : undefined,
          items: page.map((meta) => protobufItem({ ...meta, resourceVersion, owners: meta.ownerReferences })),
        });
        return { statusCode: 200, headers: {}, body: answerBody(Buffer.from(bytes)) };
      }
      const table = String(options.headers?.accept ?? '').includes('as=Table');
      const body = table
        ? {
            kind: 'Table',
            apiVersion: 'meta.k8s.io/v1',
            metadata: { resourceVersion, ...(more ? { continue: next() } : {}) },
            columnDefinitions: [{ name: 'Name' }, { name: 'Ready' }],
            rows: page.map((metadata) => ({ cells: [metadata.name, '1/1'], object: { metadata } })),
          }
        : {
            kind: 'ConfigMapList',
            apiVersion: 'v1',
            metadata: { resourceVersion, ...(more ? { continue: next() } : {}) },
            items: page.map((metadata) => ({ metadata, data: { from: resourceVersion } })),
          };
      return { statusCode: 200, headers: {}, body: answerBody(Buffer.from(JSON.stringify(body))) };
    },
  };
  return fake;
}

/** An answer's body as undici gives it: whole, or in chunks (small ones here, to cut items anywhere). */
function answerBody(bytes: Buffer) {
  return {
    arrayBuffer: async () => new Uint8Array(bytes).buffer,
    async *[Symbol.asyncIterator]() {
      for (let at = 0; at < bytes.length; at += 37) yield bytes.subarray(at, at + 37);
    },
  };
}

/** A cell answering as apiextensions-apiserver does: top-level keys sorted, so `items` before `kind` and `metadata`. */
function withSortedKeys(fake: ReturnType<typeof fakeCell>): ReturnType<typeof fakeCell> {
  return {
    ...fake,
    raw: async (...args: Parameters<typeof fake.raw>) => {
      const answer = await fake.raw(...args);
      const body = JSON.parse(Buffer.from(await answer.body.arrayBuffer()).toString('utf8')) as Record<
        string,
        unknown
      >;
      const sorted = Object.fromEntries(
        Object.keys(body)
          .sort()
          .map((key) => [key, body[key]]),
      );
      return { ...answer, body: answerBody(Buffer.from(JSON.stringify(sorted))) };
    },
  };
}

const spec = parseCellSetSpec({
  cells: ['a', 'b', 'c'].map((id) => ({
    id,
    state: 'Normal',
    kubeconfigSecretRef: { name: `${id}-kubeconfig` },
  })),
});
const state = routingState(spec, 1);
const home = (namespace: string, name: string) =>
  state.table.route(state.table.keyOf({ namespace, name })).oldCell;

/** Objects placed where the ring puts them, plus the given extras. */
function cellsWith(objects: Meta[], extras: Record<string, Meta[]> = {}) {
  // The control plane answers too: what each apiserver makes for itself is read from it.
  const byCell: Record<string, Meta[]> = { a: [], b: [], c: [], [CONTROL_PLANE_SOURCE]: [] };
  for (const meta of objects) byCell[home(meta.namespace, meta.name)]!.push(meta);
  for (const [cell, metas] of Object.entries(extras)) byCell[cell]!.push(...metas);
  return byCell;
}

async function list(
  byCell: Record<string, Meta[]>,
  target: string,
  options: {
    accept?: string;
    state?: typeof state;
    namespaceDeleted?: (namespace: string) => boolean;
    namespace?: string;
    /** Answer as apiextensions-apiserver does for custom resources: top-level keys sorted, items first. */
    customResource?: boolean;
    resource?: string;
  } = {},
) {
  const { accept = 'application/json', state: stateOverride = state, namespaceDeleted, namespace } = options;
  const clients = Object.fromEntries(
    Object.entries(byCell).map(([cell, metas], i) => {
      const fake = fakeCell(String(100 + i), metas);
      return [cell, options.customResource ? withSortedKeys(fake) : fake];
    }),
  );
  let text = '';
  let code = 0;
  const out: StreamedAnswer = {
    start: (c) => (code = c),
    write: async (chunk) => void (text += chunk.toString()),
    flush: async () => undefined,
    end: () => undefined,
  };
  const outcome = await serveMergedList(
    {
      state: stateOverride,
      resource: { group: '', resource: options.resource ?? 'configmaps' },
      namespaceLabels: () => undefined,
      ...(namespaceDeleted ? { namespaceDeleted } : {}),
      client: (cell) => clients[cell],
      target,
      ...(namespace ? { namespace } : {}),
      headers: { accept },
      signal: new AbortController().signal,
      pageSize: 4,
    },
    out,
  );
  return { outcome, code, body: text ? JSON.parse(text) : undefined, clients };
}

/** A list in protobuf (the client accepts nothing else), read back with the router's own reader. */
async function listProtobuf(byCell: Record<string, Meta[]>, target: string) {
  const clients = Object.fromEntries(
    Object.entries(byCell).map(([cell, metas], i) => [cell, fakeCell(String(100 + i), metas)]),
  );
  const chunks: Buffer[] = [];
  const out: StreamedAnswer = {
    start: () => undefined,
    write: async (chunk) => void chunks.push(Buffer.from(chunk)),
    flush: async () => undefined,
    end: () => undefined,
  };
  await serveMergedList(
    {
      state,
      resource: { group: '', resource: 'configmaps' },
      namespaceLabels: () => undefined,
      client: (cell) => clients[cell],
      target,
      headers: { accept: PROTOBUF },
      signal: new AbortController().signal,
      pageSize: 4,
      protobuf: true,
    },
    out,
  );
  return parseProtobufList(Buffer.concat(chunks));
}

const names = (body: { items?: { metadata: Meta }[]; rows?: { object: { metadata: Meta } }[] }) =>
  (body.items?.map((item) => item.metadata) ?? body.rows!.map((row) => row.object.metadata)).map(
    (meta) => `${meta.namespace}/${meta.name}`,
  );

describe('serveMergedList', () => {
  const objects = Array.from({ length: 23 }, (_, i) => ({ namespace: `ns-${i % 3}`, name: `cm-${i}` }));
  const all = objects.map((meta) => `${meta.namespace}/${meta.name}`).sort();

  it('merges every cell in the apiserver order, each object once, with a composite resourceVersion', async () => {
    // Every apiserver has its own default/kube-root-ca.crt and kube-system objects: the control plane's show.
    const perApiserver = [
      { namespace: 'default', name: 'kube-root-ca.crt' },
      { namespace: 'kube-system', name: 'extension-apiserver-authentication' },
    ];
    const { body, clients } = await list(
      cellsWith(objects, {
        a: perApiserver,
        b: perApiserver,
        c: perApiserver,
        [CONTROL_PLANE_SOURCE]: perApiserver,
      }),
      '/api/v1/configmaps',
    );
    expect(names(body)).toEqual(
      [...all, 'default/kube-root-ca.crt', 'kube-system/extension-apiserver-authentication'].sort(),
    );
    // Each shown once, the control plane's copy (the fake writes its own resourceVersion in the data).
    const own = body.items.filter((item: { metadata: Meta }) => item.metadata.name === 'kube-root-ca.crt');
    expect(own.map((item: { data: unknown }) => item.data)).toEqual([{ from: '103' }]);
    // A whole JSON list: one unpaged request per source, read as it streams in (in 37-byte chunks here).
    for (const cell of Object.values(clients)) expect(cell.requests).toEqual(['/api/v1/configmaps?']);
    expect(Object.fromEntries(decodeCellVersions(body.metadata.resourceVersion)!)).toEqual({
      a: '100',
      b: '101',
      c: '102',
      [CONTROL_PLANE_SOURCE]: '103',
    });
    expect(body.kind).toBe('ConfigMapList');
  });

  it.each([
    ['whole', '/api/v1/configmaps'],
    ['paged', '/api/v1/configmaps?limit=7'],
  ])(
    'reads a list whose items come before its kind and metadata, as custom resources are written (%s)',
    async (_, target) => {
      const { body } = await list(cellsWith(objects), target, { customResource: true });
      expect(body.kind).toBe('ConfigMapList');
      expect(Object.fromEntries(decodeCellVersions(body.metadata.resourceVersion)!)).toEqual({
        a: '100',
        b: '101',
        c: '102',
        [CONTROL_PLANE_SOURCE]: '103',
      });
      expect(names(body)).toEqual(target.includes('limit') ? all.slice(0, 7) : all);
    },
  );

  it('leaves out the objects of a namespace the control plane deleted, which linger in the cells a while', async () => {
    const gone = [
      { namespace: 'gone', name: 'x1' },
      { namespace: 'gone', name: 'x2' },
      { namespace: 'gone', name: 'x3' },
    ];
    const { body } = await list(cellsWith([...objects, ...gone]), '/api/v1/configmaps', {
      namespaceDeleted: (namespace) => namespace === 'gone',
    });
    expect(names(body)).toEqual(all);
    // Without the deletion known, they are listed (the test above would not see the difference otherwise).
    const { body: before } = await list(cellsWith([...objects, ...gone]), '/api/v1/configmaps');
    expect(names(before)).toHaveLength(all.length + gone.length);
  });

  it('lists a cell-made resource wherever it is, the control plane too, a name held twice from its newest copy', async () => {
    const sources: Record<string, Meta[]> = {
      [CONTROL_PLANE_SOURCE]: [{ namespace: 'shop', name: 'cellset-event' }],
      // Not where the ring would put them: the cell of their owner made them.
      a: [
        { namespace: 'shop', name: 'web-5d8f', creationTimestamp: '2026-11-25T10:00:00Z' },
        { namespace: 'shop', name: 'web-5d8f-x2x9z' },
        { namespace: 'kube-system', name: 'etcd-a' },
      ],
      b: [],
      // The moved Deployment's new cell made its own ReplicaSet; the old one is not collected yet.
      c: [{ namespace: 'shop', name: 'web-5d8f', creationTimestamp: '2026-11-25T10:05:00Z' }],
    };
    const clients = Object.fromEntries(
      Object.entries(sources).map(([source, metas], i) => [source, fakeCell(String(200 + i), metas)]),
    );
    let text = '';
    const outcome = await serveMergedList(
      {
        state,
        resource: { group: 'apps', resource: 'replicasets' },
        placement: 'anywhere',
        namespaceLabels: () => undefined,
        client: (source) => clients[source],
        target: '/apis/apps/v1/replicasets',
        headers: { accept: 'application/json' },
        signal: new AbortController().signal,
      },
      {
        start: () => undefined,
        write: async (chunk) => void (text += chunk.toString()),
        flush: async () => undefined,
        end: () => undefined,
      },
    );
    expect(outcome).toEqual({ code: 200 });
    const body = JSON.parse(text) as {
      items: { metadata: Meta; data: { from: string } }[];
      metadata: { resourceVersion: string };
    };
    expect(names(body)).toEqual(['shop/cellset-event', 'shop/web-5d8f', 'shop/web-5d8f-x2x9z']);
    // The newest copy: the one that stays (fakeCell writes its version into every item).
    expect(body.items[1]!.data.from).toBe('203');
    expect([...decodeCellVersions(body.metadata.resourceVersion)!.keys()].sort()).toEqual(
      [CONTROL_PLANE_SOURCE, 'a', 'b', 'c'].sort(),
    );
  });

  it('lists what a cell’s CronJob made from its cell wherever the ring puts its name, as JSON, Table and protobuf', async () => {
    const made = { name: 'nightly', controller: true };
    const jobs = Array.from({ length: 12 }, (_, i) => ({ namespace: 'shop', name: `nightly-${i}` }));
    // Each Job in a cell that is not its name's; one more a leftover there (no native controller): hidden.
    const elsewhere = (meta: Meta) =>
      ['a', 'b', 'c'].find((cell) => cell !== home(meta.namespace, meta.name))!;
    // The control plane answers too: what each apiserver makes for itself is read from it.
    const byCell: Record<string, Meta[]> = { a: [], b: [], c: [], [CONTROL_PLANE_SOURCE]: [] };
    for (const job of jobs) byCell[elsewhere(job)]!.push({ ...job, ownerReferences: [made] });
    const leftover = { namespace: 'shop', name: 'stray' };
    byCell[elsewhere(leftover)]!.push({ ...leftover, ownerReferences: [{ name: 'x', controller: false }] });
    const expected = jobs.map((job) => `${job.namespace}/${job.name}`).sort();

    expect(names((await list(byCell, '/api/v1/configmaps')).body)).toEqual(expected);
    expect(
      names(
        (await list(byCell, '/api/v1/configmaps', { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }))
          .body,
      ),
    ).toEqual(expected);
    const protobuf = await listProtobuf(byCell, '/api/v1/configmaps');
    expect(protobuf.items.map((item) => `${item.metadata.namespace}/${item.metadata.name}`)).toEqual(
      expected,
    );
  });

  it('shows a moving object from the old cell until it is migrated, then from the new one', async () => {
    const joining = parseCellSetSpec({
      cells: [
        ...['a', 'b', 'c'].map((id) => ({ id, state: 'Normal' as const, kubeconfigSecretRef: { name: id } })),
        { id: 'd', state: 'Joining', kubeconfigSecretRef: { name: 'd' } },
      ],
    });
    const moving = routingState(joining, 2);
    const name = Array.from({ length: 500 }, (_, i) => `mv-${i}`).find((candidate) => {
      const decision = moving.table.route(moving.table.keyOf({ namespace: 'ns', name: candidate }));
      return decision.oldCell !== decision.newCell;
    })!;
    const decision = moving.table.route(moving.table.keyOf({ namespace: 'ns', name }));
    const copies = (status: string) => ({
      a: [],
      b: [],
      c: [],
      d: [],
      [CONTROL_PLANE_SOURCE]: [],
      [decision.oldCell]: [
        { namespace: 'ns', name, labels: { [REBALANCE_STATUS_LABEL]: status, copy: 'old' } },
      ],
      [decision.newCell]: [{ namespace: 'ns', name, labels: { copy: 'new' } }],
    });
    const during = await list(copies(MIGRATING), '/api/v1/namespaces/ns/configmaps', { state: moving });
    expect(during.body.items).toHaveLength(1);
    // The old copy, without the fence label: clients never see it.
    expect(during.body.items[0].metadata.labels).toEqual({ copy: 'old' });
    const after = await list(copies(MIGRATED), '/api/v1/namespaces/ns/configmaps', { state: moving });
    expect(after.body.items).toHaveLength(1);
    expect(after.body.items[0].metadata.labels).toEqual({ copy: 'new' });
  });

  it('pages with limit and continue through every object exactly once, in order', async () => {
    const byCell = cellsWith(objects);
    const seen: string[] = [];
    let target = '/api/v1/configmaps?limit=5';
    let versions: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const { body } = await list(byCell, target);
      expect(body.items.length).toBeLessThanOrEqual(5);
      seen.push(...names(body));
      versions ??= body.metadata.resourceVersion;
      expect(body.metadata.resourceVersion).toBe(versions);
      if (!body.metadata.continue) break;
      target = `/api/v1/configmaps?limit=5&continue=${encodeURIComponent(body.metadata.continue)}`;
    }
    expect(seen).toEqual(all);
  });

  it.each([
    ['across namespaces', '/api/v1/configmaps', 4],
    ['in one namespace', '/api/v1/namespaces/ns-0/configmaps', 1],
  ])(
    'continues each cell right after the last object given, reading little twice (%s)',
    async (_, path, spread) => {
      const many = Array.from({ length: 300 }, (_, i) => ({
        namespace: `ns-${i % spread}`,
        name: `cm-${i}`,
      }));
      const byCell = cellsWith(many);
      const seen: string[] = [];
      let served = 0;
      let target = `${path}?limit=30`;
      for (let pages = 0; pages < 40 && target; pages++) {
        const { body, clients } = await list(byCell, target);
        seen.push(...names(body));
        served += Object.values(clients).reduce((sum, client) => sum + client.served, 0);
        const requests = Object.values(clients).flatMap((client) => client.requests);
        expect(requests.filter((request) => request.includes('resourceVersionMatch=Exact'))).toEqual([]);
        const token = body.metadata.continue;
        target = token ? `${path}?limit=30&continue=${encodeURIComponent(token)}` : '';
      }
      expect(seen).toEqual(many.map((meta) => `${meta.namespace}/${meta.name}`).sort());
      // Each cell is asked for its share plus a margin (1.2× + 2, so about 1.4× at this limit), never for a
      // page it already gave: well under the 3× of asking each cell for the whole limit and skipping.
      expect(served).toBeLessThanOrEqual(many.length * 1.6);
    },
  );

  it('reads only its own objects of the control plane in one namespace, and shares a page among the cells', async () => {
    const many = Array.from({ length: 60 }, (_, i) => ({ namespace: 'shop', name: `cm-${i}` }));
    // What the control plane holds in that namespace besides its own (written to it directly) is never shown.
    const byCell = cellsWith(many, {
      [CONTROL_PLANE_SOURCE]: [
        { namespace: 'shop', name: 'kube-root-ca.crt' },
        ...Array.from({ length: 40 }, (_, i) => ({ namespace: 'shop', name: `direct-${i}` })),
      ],
    });
    const path = '/api/v1/namespaces/shop/configmaps';
    const { body, clients } = await list(byCell, `${path}?limit=30`, { namespace: 'shop' });
    expect(names(body)).toEqual(
      ['kube-root-ca.crt', ...many.map((meta) => meta.name)]
        .map((name) => `shop/${name}`)
        .sort()
        .slice(0, 30),
    );
    const selector = `fieldSelector=${encodeURIComponent('metadata.name=kube-root-ca.crt')}`;
    expect(clients[CONTROL_PLANE_SOURCE]!.requests).toEqual([`${path}?${selector}&limit=30`]);
    expect(clients[CONTROL_PLANE_SOURCE]!.served).toBe(1);
    // The ring's three cells share the page: each asked for a third of it with the margin (1.2 × 10 + 2).
    for (const cell of ['a', 'b', 'c']) expect(clients[cell]!.requests[0]).toBe(`${path}?limit=14`);
    // Services: the control plane has its own only in `default`, so a list elsewhere never asks it.
    const services = await list(byCell, `/api/v1/namespaces/shop/services?limit=30`, {
      namespace: 'shop',
      resource: 'services',
    });
    expect(services.clients[CONTROL_PLANE_SOURCE]!.requests).toEqual([]);
    expect([...decodeCellVersions(services.body.metadata.resourceVersion)!.keys()].sort()).toEqual([
      'a',
      'b',
      'c',
    ]);
    // Across namespaces the control plane is read whole (its system namespaces'), still outside the share.
    const across = await list(byCell, '/api/v1/configmaps?limit=30');
    expect(across.clients[CONTROL_PLANE_SOURCE]!.requests).toEqual(['/api/v1/configmaps?limit=30']);
    for (const cell of ['a', 'b', 'c'])
      expect(across.clients[cell]!.requests[0]).toBe('/api/v1/configmaps?limit=14');
  });

  it('resumes a cell on its first page at the pinned version, and passes selectors through', async () => {
    const byCell = cellsWith(objects);
    const first = await list(byCell, '/api/v1/configmaps?limit=2&labelSelector=app%3Dweb');
    expect(first.body.items).toEqual([]);
    // Each cell's whole list fits its first page (no continue token to start from): the next page asks
    // for that first page again, exactly as it was, and skips what was given.
    const some = await list(byCell, '/api/v1/configmaps?limit=20');
    const second = await list(byCell, `/api/v1/configmaps?limit=20&continue=${some.body.metadata.continue}`);
    const requests = Object.values(second.clients).flatMap((client) => client.requests);
    expect(requests.some((request) => request.includes('resourceVersionMatch=Exact'))).toBe(true);
    expect([...names(some.body), ...names(second.body)]).toEqual(all);
    expect(first.clients.a!.requests[0]).toContain('labelSelector=app%3Dweb');
  });

  it('lists in protobuf for a client that accepts nothing else: merged, paged, each item at its own version', async () => {
    const whole = await listProtobuf(cellsWith(objects), '/api/v1/configmaps');
    expect(whole.kind).toBe('ConfigMapList');
    expect(whole.items.map(({ metadata }) => `${metadata.namespace}/${metadata.name}`)).toEqual(all);
    expect(decodeCellVersions(whole.resourceVersion)?.size).toBe(4); // three cells and the control plane
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await listProtobuf(
        cellsWith(objects),
        `/api/v1/configmaps?limit=5${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
      );
      seen.push(...page.items.map(({ metadata }) => `${metadata.namespace}/${metadata.name}`));
      token = page.continue;
    } while (token);
    expect(seen).toEqual(all);
    // Each item: its version as clients see it (its cell's slot and own version; the fake's list version).
    const item = whole.raw[0]!.toString('latin1');
    const { namespace, name } = whole.items[0]!.metadata;
    const cell = home(namespace!, name!);
    expect(item).toContain(shownVersion(cell, String(100 + ['a', 'b', 'c'].indexOf(cell)))!);
  });

  it('merges Tables row by row under one set of columns', async () => {
    const { body } = await list(cellsWith(objects), '/api/v1/configmaps', {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(body.kind).toBe('Table');
    expect(body.columnDefinitions).toEqual([{ name: 'Name' }, { name: 'Ready' }]);
    expect(names(body)).toEqual(all);
    expect(body.rows[0].cells).toHaveLength(2);
  });

  it('refuses tokens and versions it did not issue with 400; lists from an object version not older than it', async () => {
    const byCell = cellsWith(objects);
    expect((await list(byCell, '/api/v1/configmaps?continue=abc')).outcome.status).toMatchObject({
      code: 400,
    });
    expect((await list(byCell, '/api/v1/configmaps?resourceVersion=v1-abc')).outcome.status).toMatchObject({
      code: 400,
      message: 'resourceVersion "v1-abc" was not issued by this router',
    });
    // Not older than an object version: its cell at its own version, the others (and a number no live
    // cell's slot matches: all of them) at their latest.
    const version = shownVersion('b', '77')!;
    const notOlder = await list(byCell, `/api/v1/configmaps?resourceVersion=${version}`);
    expect(notOlder.code).toBe(200);
    expect(notOlder.clients['b']!.requests[0]).toContain('resourceVersion=77');
    expect(notOlder.clients['a']!.requests[0]).not.toContain('resourceVersion=');
    const none = await list(byCell, '/api/v1/configmaps?resourceVersion=12345');
    expect(none.code).toBe(200);
    expect(
      Object.values(none.clients).every((client) => !client.requests[0]!.includes('resourceVersion=')),
    ).toBe(true);
    // Exactly at one: where the history places it, and without one, too old.
    expect(
      (await list(byCell, `/api/v1/configmaps?resourceVersion=${version}&resourceVersionMatch=Exact`)).outcome
        .status,
    ).toMatchObject({ code: 410, reason: 'Expired' });
    expect((await list(byCell, '/api/v1/configmaps?limit=-1')).outcome.status).toMatchObject({ code: 400 });
  });
});
