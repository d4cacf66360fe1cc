import type { KubeClient } from '@cellfed/controller-kit';

import { parseRequestInfo, type ResourceRequestInfo } from '../request/request-info.ts';
import type { KubeStatus } from '../status/kube-status.ts';
import type { CellOwners } from '../views/cell-owners.ts';
import { lengthDelimited } from '../request/protobuf-wire.ts';
import { protobufEnveloped } from '../testing/protobuf-item.ts';
import { cellOwnersReader, markShapeOf, reservedMarksRefusal } from './cell-writes.ts';

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';

/** The object as its cell stores it: a Deployment with one kept mark and a selector a tenant wrote. */
const STORED: { metadata: Record<string, unknown> } & Record<string, unknown> = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'team',
    resourceVersion: '7',
    labels: { app: 'web' },
    annotations: { 'cellfed.io/uid': 'u-1', note: 'x' },
  },
  spec: { selector: { matchLabels: { 'cellfed.io/held-spec': '{"hostNetwork":true}' } } },
};

const stored = (): CellOwners => ({
  native: [],
  held: [],
  resourceVersion: '7',
  hasAnnotations: true,
  identity: { 'cellfed.io/uid': 'u-1' },
  marks: {
    labels: STORED.metadata['labels'] as Record<string, string>,
    annotations: STORED.metadata['annotations'] as Record<string, string>,
  },
  object: STORED,
});

/** The refusal of a write to `target`, with the body as raw text (so escapes reach the check as sent). */
async function refusalOf(
  method: string,
  target: string,
  contentType: string,
  text: string,
  encoding: BufferEncoding = 'utf8',
): Promise<KubeStatus | undefined> {
  const info = parseRequestInfo(method, target) as ResourceRequestInfo;
  const shape = markShapeOf(method, contentType);
  if (!shape) return undefined;
  return reservedMarksRefusal(
    info,
    shape,
    method,
    contentType,
    Buffer.from(text, encoding),
    () => Promise.resolve(stored()),
    () => Promise.resolve(undefined),
  );
}

const DEPLOYMENT = '/apis/apps/v1/namespaces/team/deployments/web';
const CONFIGMAP = '/api/v1/namespaces/team/configmaps/c';

describe('reservedMarksRefusal: what a write means, not its bytes', () => {
  it('refuses a JSON patch whose path escapes the slash as ~1, naming the mark', async () => {
    const refused = await refusalOf(
      'PATCH',
      DEPLOYMENT,
      JSON_PATCH,
      '[{"op":"add","path":"/metadata/annotations/cellfed.io~1held-spec","value":"{}"}]',
    );
    expect(refused).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(refused!.message).toContain('metadata.annotations[cellfed.io/held-spec]: Forbidden');
  });

  it.each([
    ['\\u002f', 'annotations', 'cellfed.io/fenced-at'],
    ['\\u002F', 'annotations', 'cellfed.io/uid'],
    ['\\/', 'labels', 'cellfed.io/followed-from'],
    ['/', 'labels', 'cellfed.io/followed-from'],
  ])('refuses a merge patch whose key spells the slash as %s', async (slash, map, mark) => {
    const key = mark.replace('/', slash);
    const refused = await refusalOf(
      'PATCH',
      CONFIGMAP,
      MERGE_PATCH,
      `{"metadata":{"${map}":{"${key}":"2026-12-06T00:00:00Z"}}}`,
    );
    expect(refused?.message).toContain(`metadata.${map}[${mark}]: Forbidden`);
  });

  it('refuses a key escaped whole (\\u0063ellfed.io) and one in a YAML apply with duplicate keys', async () => {
    expect(
      await refusalOf('PATCH', CONFIGMAP, MERGE_PATCH, '{"metadata":{"labels":{"\\u0063ellfed.io/x":"1"}}}'),
    ).toMatchObject({ code: 422 });
    const yaml = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: c',
      '  annotations:',
      '    "cellfed.io\\x2fuid": spoofed',
      '  annotations:',
      '    "cellfed.io\\x2fuid": spoofed',
    ].join('\n');
    const refused = await refusalOf(
      'PATCH',
      `${CONFIGMAP}?fieldManager=m`,
      'application/apply-patch+yaml',
      yaml,
    );
    expect(refused?.message).toContain('metadata.annotations[cellfed.io/uid]: Forbidden');
  });

  it('checks a /status patch and a subresource create as it checks the object’s own writes', async () => {
    const status = await refusalOf(
      'PATCH',
      `${DEPLOYMENT}/status`,
      MERGE_PATCH,
      '{"metadata":{"annotations":{"cellfed.io/held-spec":"{}"}}}',
    );
    expect(status?.message).toContain('metadata.annotations[cellfed.io/held-spec]');
    // A Binding's annotations go onto its Pod.
    const binding = await refusalOf(
      'POST',
      '/api/v1/namespaces/team/pods/p/binding',
      'application/json',
      '{"metadata":{"name":"p","annotations":{"cellfed.io/uid":"u"}},"target":{"kind":"Node","name":"n"}}',
    );
    expect(binding?.message).toContain('metadata.annotations[cellfed.io/uid]');
  });

  it('applies a JSON patch’s copy or move to the object as stored: a mark copied from a selector is refused', async () => {
    const refused = await refusalOf(
      'PATCH',
      DEPLOYMENT,
      JSON_PATCH,
      '[{"op":"copy","from":"/spec/selector/matchLabels","path":"/metadata/annotations"}]',
    );
    expect(refused?.message).toContain('metadata.annotations[cellfed.io/held-spec]');
    // A copy that brings no mark goes through.
    expect(
      await refusalOf(
        'PATCH',
        DEPLOYMENT,
        JSON_PATCH,
        '[{"op":"copy","from":"/metadata/labels/app","path":"/metadata/labels/shown"}]',
      ),
    ).toBeUndefined();
  });

  it('refuses a patch that drops a stored mark without naming it (null maps, $patch directives)', async () => {
    for (const [type, body] of [
      [MERGE_PATCH, '{"metadata":{"annotations":null}}'],
      [STRATEGIC, '{"metadata":{"annotations":{"$patch":"replace","note":"y"}}}'],
      [STRATEGIC, '{"metadata":{"$patch":"replace","name":"web"}}'],
    ] as const)
      expect((await refusalOf('PATCH', DEPLOYMENT, type, body))?.message).toContain(
        'metadata.annotations[cellfed.io/uid]',
      );
    // The same directive on a map without marks, and a patch of a client's own annotation, go through.
    expect(
      await refusalOf(
        'PATCH',
        DEPLOYMENT,
        STRATEGIC,
        '{"metadata":{"labels":{"$patch":"replace","app":"w"}}}',
      ),
    ).toBeUndefined();
    expect(
      await refusalOf('PATCH', DEPLOYMENT, MERGE_PATCH, '{"metadata":{"annotations":{"note":null}}}'),
    ).toBeUndefined();
  });

  it('refuses what it cannot decode: a patch type it does not know (415), a body that does not parse (400)', async () => {
    expect(await refusalOf('PATCH', DEPLOYMENT, 'application/apply-patch+cbor', '\u00a1dmeta')).toMatchObject(
      { code: 415, reason: 'UnsupportedMediaType' },
    );
    expect(await refusalOf('PUT', DEPLOYMENT, 'application/cbor', '\u00a1dmeta')).toMatchObject({
      code: 415,
    });
    expect(await refusalOf('PUT', DEPLOYMENT, 'application/json', '{"metadata":')).toMatchObject({
      code: 400,
      reason: 'BadRequest',
    });
  });

  it('lets an update send back the marks the object has, and a write without marks through', async () => {
    expect(
      await refusalOf('PUT', DEPLOYMENT, 'application/json', JSON.stringify({ ...STORED, spec: {} })),
    ).toBeUndefined();
    expect(
      await refusalOf('PATCH', CONFIGMAP, MERGE_PATCH, '{"metadata":{"labels":{"team":"a"}}}'),
    ).toBeUndefined();
  });

  it('answers the caller’s 403 first when it may not make the write', async () => {
    const info = parseRequestInfo('PATCH', CONFIGMAP) as ResourceRequestInfo;
    const forbidden = { code: 403, reason: 'Forbidden', message: 'no' } as KubeStatus;
    const refused = await reservedMarksRefusal(
      info,
      'merge-patch',
      'PATCH',
      MERGE_PATCH,
      Buffer.from('{"metadata":{"labels":{"cellfed.io\\/x":"1"}}}'),
      () => Promise.resolve(stored()),
      () => Promise.resolve({ status: forbidden } as never),
    );
    expect(refused).toBe(forbidden);
  });

  it('reads a body as the apiserver would (duplicate JSON keys merged), and refuses YAML merge keys', async () => {
    // Go merges both labels maps into the Deployment; JavaScript would keep the last only.
    const duplicated = await refusalOf(
      'PUT',
      DEPLOYMENT,
      'application/json',
      '{"metadata":{"name":"web","labels":{"cellfed.io/followed-from":"x"},"labels":{"app":"web"}}}',
    );
    expect(duplicated).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(duplicated!.message).toContain('metadata.labels[cellfed.io/followed-from]');
    const merged = await refusalOf(
      'PATCH',
      `${DEPLOYMENT}?fieldManager=m`,
      'application/apply-patch+yaml',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: {metadata: {labels: {app: web, <<: {cellfed.io/followed-from: x}}}}}\n',
    );
    expect(merged).toMatchObject({ code: 400 });
    expect(merged!.message).toContain('merge key');
  });

  it('refuses a JSON patch that does not apply to the object as stored (it might in the cell), or drops a mark', async () => {
    const proto = await refusalOf(
      'PATCH',
      DEPLOYMENT,
      JSON_PATCH,
      JSON.stringify([
        { op: 'add', path: '/spec/__proto__', value: 0 },
        {
          op: 'add',
          path: '/spec/template',
          value: { spec: { nodeSelector: { 'cellfed.io/followed-from': 'x' } } },
        },
        { op: 'move', from: '/spec/template/spec/nodeSelector', path: '/spec/template/metadata' },
      ]),
    );
    expect(proto).toMatchObject({ code: 422, reason: 'Invalid' });
    // The kept uid is kept (the router writes it back); another stored mark may not go.
    const stored = STORED.metadata;
    STORED.metadata = { ...stored, labels: { app: 'web', 'cellfed.io/mirrored-from': 'control-plane' } };
    try {
      expect(
        (await refusalOf('PATCH', DEPLOYMENT, JSON_PATCH, '[{"op":"remove","path":"/metadata/labels"}]'))
          ?.message,
      ).toContain('metadata.labels[cellfed.io/mirrored-from]');
      expect(
        (
          await refusalOf(
            'PUT',
            DEPLOYMENT,
            'application/json',
            JSON.stringify({ ...STORED, metadata: { ...STORED.metadata, labels: { app: 'web' } } }),
          )
        )?.message,
      ).toContain('metadata.labels[cellfed.io/mirrored-from]');
      expect(
        (
          await refusalOf(
            'PATCH',
            DEPLOYMENT,
            STRATEGIC,
            '{"metadata":{"labels":{"$retainKeys":["app"],"app":"web"}}}',
          )
        )?.message,
      ).toContain('metadata.labels[cellfed.io/mirrored-from]');
    } finally {
      STORED.metadata = stored;
    }
  });

  it('refuses a protobuf body with the prefix anywhere but the object’s own labels and annotations', async () => {
    const own = protobufEnveloped({ name: 'web', labels: { 'cellfed.io/followed-from': 'x' } }, 'Deployment');
    expect(await refusalOf('PUT', DEPLOYMENT, PROTOBUF_TYPE, own.toString('latin1'), 'latin1')).toMatchObject(
      {
        code: 422,
      },
    );
    // A Deployment whose spec (field 2: its template, here) names the prefix.
    const item = Buffer.concat([
      lengthDelimited(1, lengthDelimited(1, Buffer.from('web'))),
      lengthDelimited(2, lengthDelimited(3, Buffer.from('cellfed.io/followed-from'))),
    ]);
    const elsewhere = Buffer.concat([Buffer.from('k8s\0', 'binary'), lengthDelimited(2, item)]);
    expect(
      await refusalOf('PUT', DEPLOYMENT, PROTOBUF_TYPE, elsewhere.toString('latin1'), 'latin1'),
    ).toMatchObject({
      code: 400,
      message: expect.stringContaining('outside the object’s own labels and annotations'),
    });
  });

  it('answers the cell’s refusal when the cell will not show the caller the object it updates', async () => {
    const forbidden = { kind: 'Status', code: 403, reason: 'Forbidden', message: 'pods "p" is forbidden' };
    const client = {
      raw: () =>
        Promise.resolve({
          statusCode: 403,
          body: { text: () => Promise.resolve(JSON.stringify(forbidden)) },
        }),
    } as unknown as KubeClient;
    const info = parseRequestInfo('PUT', '/api/v1/namespaces/team/pods/p') as ResourceRequestInfo;
    const refused = await reservedMarksRefusal(
      info,
      'object',
      'PUT',
      'application/json',
      Buffer.from('{"metadata":{"name":"p"}}'),
      cellOwnersReader(client, 'cell-1', '/api/v1/namespaces/team/pods/p', {}),
      () => Promise.resolve(undefined),
    );
    expect(refused).toMatchObject({ code: 403 });
  });

  it('lets kubectl rollout undo replace the annotations whole: what the router keeps itself is its own', async () => {
    const stored = STORED.metadata;
    STORED.metadata = {
      ...stored,
      annotations: { 'cellfed.io/uid': 'u-1', 'cellfed.io/owner-references': '[]', note: 'x' },
    };
    try {
      expect(
        await refusalOf(
          'PATCH',
          DEPLOYMENT,
          JSON_PATCH,
          '[{"op":"replace","path":"/metadata/annotations","value":{"deployment.kubernetes.io/revision":"1"}}]',
        ),
      ).toBeUndefined();
    } finally {
      STORED.metadata = stored;
    }
  });
});
