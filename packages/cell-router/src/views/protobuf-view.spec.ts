import { HELD_OWNERS_ANNOTATION } from '@cellfed/api';
import { jest } from '@jest/globals';
import { heldOwners, type OwnerReference } from '@cellfed/federation';

import { fieldSpans } from '../request/protobuf-wire.ts';
import type { CellOwnersReader } from './cell-owners.ts';
import { cellViewOfProtobuf, showProtobuf } from './protobuf-view.ts';

// The test's own encoder, independent of the module's.
function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n >= 128) {
    bytes.push((n % 128) + 128);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return Buffer.from(bytes);
}
const field = (number: number, value: Buffer | string) => {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([varint(number * 8 + 2), varint(bytes.length), bytes]);
};
const flag = (number: number) => Buffer.concat([varint(number * 8), varint(1)]);
const ownerBytes = (o: OwnerReference) =>
  Buffer.concat([
    field(1, o.kind),
    field(3, o.name),
    field(4, o.uid),
    field(5, o.apiVersion),
    ...(o.controller ? [flag(6)] : []),
  ]);

/** A ConfigMap as client-go encodes it, with owner references and annotations. */
function configMap(owners: OwnerReference[], annotations: Record<string, string> = {}, uid?: string): Buffer {
  const meta = Buffer.concat([
    field(1, 'settings'),
    field(3, 'demo'),
    ...(uid ? [field(5, uid)] : []),
    ...Object.entries(annotations).map(([k, v]) => field(12, Buffer.concat([field(1, k), field(2, v)]))),
    ...owners.map((o) => field(13, ownerBytes(o))),
  ]);
  const raw = Buffer.concat([field(1, meta), field(2, Buffer.concat([field(1, 'a'), field(2, '1')]))]);
  return Buffer.concat([
    Buffer.from('k8s\0', 'binary'),
    field(1, Buffer.concat([field(1, 'v1'), field(2, 'ConfigMap')])),
    field(2, raw),
    field(3, ''),
    field(4, ''),
  ]);
}

/** The ObjectMeta fields of a protobuf object, decoded by field number. */
function metaOf(body: Buffer) {
  const envelope = body.subarray(4);
  const raw = fieldSpans(envelope).find((s) => s.number === 2)!;
  const object = envelope.subarray(raw.start, raw.end);
  const meta = fieldSpans(object).find((s) => s.number === 1)!;
  const bytes = object.subarray(meta.start, meta.end);
  const spans = fieldSpans(bytes);
  const annotations = Object.fromEntries(
    spans
      .filter((s) => s.number === 12)
      .map((s) => {
        const entry = bytes.subarray(s.start, s.end);
        const [k, v] = fieldSpans(entry);
        return [entry.subarray(k!.start, k!.end).toString(), entry.subarray(v!.start, v!.end).toString()];
      }),
  );
  const uid = spans.findLast((s) => s.number === 5);
  return {
    annotations,
    uid: uid ? bytes.subarray(uid.start, uid.end).toString() : undefined,
    owners: spans.filter((s) => s.number === 13).length,
    data: object.subarray(meta.end),
  };
}

/** An object of `kind` with just this ObjectMeta, in the `k8s\0` envelope. */
function enveloped(apiVersion: string, kind: string, meta: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from('k8s\0', 'binary'),
    field(1, Buffer.concat([field(1, apiVersion), field(2, kind)])),
    field(2, field(1, meta)),
  ]);
}

/** The ObjectMeta bytes of what {@link showProtobuf} answers for `body`. */
function shownMetaOf(body: Buffer): Buffer {
  const shown = showProtobuf(body).subarray(4);
  const raw = fieldSpans(shown).find((s) => s.number === 2)!;
  const object = shown.subarray(raw.start, raw.end);
  const metaSpan = fieldSpans(object).find((s) => s.number === 1)!;
  return object.subarray(metaSpan.start, metaSpan.end);
}

const deployment: OwnerReference = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: 'web',
  uid: 'd-1',
  controller: true,
};
const cronJob: OwnerReference = { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'native' };

describe('protobuf views', () => {
  it('hold a create’s references in the annotation and show them back as they were', async () => {
    const sent = configMap([deployment], { keep: 'me' });
    const read = jest.fn<CellOwnersReader>();
    const written = await cellViewOfProtobuf('POST', sent, read);
    expect(read).not.toHaveBeenCalled();
    const stored = metaOf(written!.body);
    expect(stored.owners).toBe(0);
    expect(heldOwners(stored.annotations)).toEqual([deployment]);
    expect(stored.annotations.keep).toBe('me');
    const shown = metaOf(showProtobuf(written!.body));
    expect(shown.owners).toBe(1);
    expect(shown.annotations).toEqual({ keep: 'me' });
    expect(shown.data.equals(metaOf(sent).data)).toBe(true);
    expect(showProtobuf(written!.body).subarray(-4).equals(sent.subarray(-4))).toBe(true);
  });

  it('keep the cell’s native references native on an update', async () => {
    const written = await cellViewOfProtobuf('PUT', configMap([cronJob, deployment]), () =>
      Promise.resolve({
        native: [cronJob],
        held: [],
        resourceVersion: '1',
        hasAnnotations: false,
        identity: {},
      }),
    );
    const stored = metaOf(written!.body);
    expect(stored.owners).toBe(1);
    expect(heldOwners(stored.annotations)).toEqual([deployment]);
  });

  it('give an update of a copy back what keeps its identity, without the uid clients know', async () => {
    const identity = { 'cellfed.io/uid': 'first-uid', 'cellfed.io/created': '2026-01-01T00:00:10Z' };
    const read = () =>
      Promise.resolve({ native: [], held: [], resourceVersion: '1', hasAnnotations: true, identity });
    const written = await cellViewOfProtobuf('PUT', configMap([], { keep: 'me' }, 'first-uid'), read);
    const stored = metaOf(written!.body);
    expect(stored.annotations).toEqual({ keep: 'me', ...identity });
    expect(stored.uid).toBeUndefined();
    const own = await cellViewOfProtobuf('PUT', configMap([], { keep: 'me' }, 'copy-uid'), read);
    expect(metaOf(own!.body).uid).toBe('copy-uid');
  });

  it('leave bodies without references, and answers with nothing held, as they are', async () => {
    const plain = configMap([], { a: 'b' });
    expect(await cellViewOfProtobuf('POST', plain, jest.fn<CellOwnersReader>())).toBeUndefined();
    expect(showProtobuf(plain)).toBe(plain);
    const notMarked = Buffer.concat([Buffer.from('xxxx'), Buffer.from(HELD_OWNERS_ANNOTATION)]);
    expect(showProtobuf(notMarked)).toBe(notMarked);
  });

  it('show a copy with the uid and creation time clients know', () => {
    const identity = { 'cellfed.io/uid': 'first-uid', 'cellfed.io/created': '2026-01-01T00:00:10Z' };
    const annotations = Object.entries(identity).map(([k, v]) =>
      field(12, Buffer.concat([field(1, k), field(2, v)])),
    );
    const meta = Buffer.concat([
      field(1, 'settings'),
      field(5, 'copy-uid'),
      field(8, Buffer.concat([varint(1 * 8), varint(1_800_000_000)])),
      ...annotations,
    ]);
    const shownMeta = shownMetaOf(enveloped('v1', 'ConfigMap', meta));
    const spans = fieldSpans(shownMeta);
    const uid = spans.find((s) => s.number === 5)!;
    expect(shownMeta.subarray(uid.start, uid.end).toString()).toBe('first-uid');
    const created = spans.find((s) => s.number === 8)!;
    const time = shownMeta.subarray(created.start, created.end);
    expect(
      time.equals(Buffer.concat([varint(1 * 8), varint(Date.parse(identity['cellfed.io/created']) / 1000)])),
    ).toBe(true);
    // Without the annotations that keep them (an update gets them back).
    expect(spans.filter((s) => s.number === 12)).toHaveLength(0);
  });

  it('show no move’s fence label, and keep the object’s own labels', () => {
    const label = (k: string, v: string) => field(11, Buffer.concat([field(1, k), field(2, v)]));
    const meta = Buffer.concat([
      field(1, 'web'),
      label('app', 'web'),
      label('cellfed.io/rebalance-status', 'migrating'),
      label('phase', 'joined'),
    ]);
    const shownMeta = shownMetaOf(enveloped('apps/v1', 'Deployment', meta));
    const labels = fieldSpans(shownMeta)
      .filter((s) => s.number === 11)
      .map((s) => {
        const entry = shownMeta.subarray(s.start, s.end);
        const [k, v] = fieldSpans(entry);
        return `${entry.subarray(k!.start, k!.end).toString()}=${entry.subarray(v!.start, v!.end).toString()}`;
      });
    expect(labels).toEqual(['app=web', 'phase=joined']);
  });
});

describe('showProtobuf: a copy’s generation', () => {
  const number = (n: number, value: number) => Buffer.concat([varint(n * 8), varint(value)]);
  /** A Deployment of generation `generation` whose status observed `observed`, annotated `origin`. */
  function deployment(kind: string, generation: number, observed: number, origin?: string): Buffer {
    const meta = Buffer.concat([
      field(1, 'web'),
      field(3, 'shop'),
      number(7, generation),
      ...(origin ? [field(12, Buffer.concat([field(1, 'cellfed.io/generation'), field(2, origin)]))] : []),
    ]);
    const status =
      kind === 'DaemonSet' ? Buffer.concat([number(1, 2), number(5, observed)]) : number(1, observed);
    return Buffer.concat([
      Buffer.from('k8s\0', 'binary'),
      field(1, Buffer.concat([field(1, 'apps/v1'), field(2, kind)])),
      field(2, Buffer.concat([field(1, meta), field(2, ''), field(3, status)])),
    ]);
  }
  /** metadata.generation and status.observedGeneration (field `observedField`) of a shown object. */
  function generations(body: Buffer, observedField: number) {
    const envelope = body.subarray(4);
    const raw = fieldSpans(envelope).find((s) => s.number === 2)!;
    const object = envelope.subarray(raw.start, raw.end);
    const spans = fieldSpans(object);
    const meta = spans.find((s) => s.number === 1)!;
    const status = spans.find((s) => s.number === 3)!;
    const read = (bytes: Buffer, n: number) => {
      const span = fieldSpans(bytes).findLast((s) => s.number === n)!;
      return bytes[span.start]!;
    };
    return {
      generation: read(object.subarray(meta.start, meta.end), 7),
      observed: read(object.subarray(status.start, status.end), observedField),
      annotated: object.subarray(meta.start, meta.end).includes('cellfed.io/generation'),
    };
  }

  it.each([
    ['Deployment', 1],
    ['StatefulSet', 1],
    ['DaemonSet', 5],
  ])(
    'shows a %s the generation clients knew, its observedGeneration with it, without the mark',
    (kind, at) => {
      // Clients knew 7 when the copy's own was 2; it is 3 now, and observed.
      expect(generations(showProtobuf(deployment(kind, 3, 3, '7:2')), at)).toEqual({
        generation: 8,
        observed: 8,
        annotated: false,
      });
    },
  );

  it('leaves an object never copied, and what cells make, as stored', () => {
    const plain = deployment('Deployment', 3, 3);
    expect(showProtobuf(plain)).toBe(plain);
    expect(generations(showProtobuf(deployment('Deployment', 3, 3, '7:2'), { copies: false }), 1)).toEqual({
      generation: 3,
      observed: 3,
      annotated: false,
    });
  });
});
