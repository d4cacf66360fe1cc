import { ORIGIN_UID_ANNOTATION, parseCellSetSpec } from '@cellfed/api';
import { PassThrough } from 'node:stream';

import { memoryLogger } from '@cellfed/controller-kit/testing';

import { lengthDelimited } from '../request/protobuf-wire.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { routingState } from '../routing/route-plan.ts';
import { failure } from '../status/kube-status.ts';
import { protobufEnveloped } from '../testing/protobuf-item.ts';
import { decodeCellVersions } from './cell-versions.ts';
import { serveMergedWatch } from './merged-watch.ts';
import {
  isProtobufObject,
  protobufFrame,
  protobufObject,
  protobufWatchEvents,
  protobufWithVersion,
} from './protobuf-watch.ts';
import { PROTOBUF_WATCH } from './watch-codec.ts';

async function collect(chunks: Buffer[]) {
  const events = [];
  for await (const event of protobufWatchEvents(
    (async function* () {
      yield* chunks;
    })(),
  ))
    events.push(event);
  return events;
}

describe('protobuf watch frames', () => {
  it('reads events split anywhere across chunks, with their objects’ metadata', async () => {
    const frames = Buffer.concat([
      protobufFrame({
        type: 'ADDED',
        object: protobufObject(
          protobufEnveloped({ name: 'a', namespace: 'shop', resourceVersion: '5', labels: { app: 'web' } }),
        ),
      }),
      protobufFrame({ type: 'ERROR', object: failure(410, 'Expired', 'too old resource version: 5') }),
    ]);
    const events = await collect([frames.subarray(0, 3), frames.subarray(3, 40), frames.subarray(40)]);
    expect(events.map((event) => event.type)).toEqual(['ADDED', 'ERROR']);
    expect((events[0]!.object as { metadata: unknown }).metadata).toEqual({
      name: 'a',
      namespace: 'shop',
      resourceVersion: '5',
      labels: { app: 'web' },
    });
    expect(events[1]!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });

  it('shows a copy by the identity clients know, at the composite version', () => {
    const copy = protobufObject(
      protobufEnveloped({
        name: 'a',
        resourceVersion: '5',
        annotations: { [ORIGIN_UID_ANNOTATION]: 'first' },
      }),
    );
    const shown = protobufWithVersion(copy, 'cf1.x');
    expect(shown.metadata.resourceVersion).toBe('cf1.x');
    // Read back as a decoder would: the last occurrence of a field wins.
    expect(protobufObject(shown.protobuf).metadata.resourceVersion).toBe('cf1.x');
    expect(shown.protobuf.includes(Buffer.from(ORIGIN_UID_ANNOTATION))).toBe(false);
    expect(isProtobufObject(shown)).toBe(true);
  });
});

describe('a merged watch in protobuf', () => {
  it('merges the cells’ frames into frames with composite versions, and ends a streaming list once', async () => {
    const spec = parseCellSetSpec({
      cells: ['a', 'b'].map((id) => ({ id, state: 'Normal', kubeconfigSecretRef: { name: id } })),
    });
    const state = routingState(spec, 1);
    const home = (name: string) => state.table.route(state.table.keyOf({ namespace: 'ns', name })).oldCell;
    const streams = new Map<string, PassThrough>();
    const written: Buffer[] = [];
    const abort = new AbortController();
    const done = serveMergedWatch(
      {
        state: () => state,
        resource: { group: '', resource: 'configmaps' },
        namespaceLabels: () => undefined,
        client: (cell) => ({
          raw: async () => {
            const stream = new PassThrough();
            streams.set(cell, stream);
            return { statusCode: 200, body: stream };
          },
        }),
        target:
          '/api/v1/namespaces/ns/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
        headers: {},
        signal: abort.signal,
        readCopy: async () => undefined,
        logger: memoryLogger().logger,
        codec: PROTOBUF_WATCH,
      },
      {
        start: () => undefined,
        write: async (chunk) => void written.push(Buffer.from(chunk)),
        flush: async () => undefined,
        end: () => undefined,
      },
    );
    // Two cells and the control plane (for what each apiserver makes for itself, none here).
    for (let i = 0; i < 100 && streams.size < 3; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    const names = ['one', 'two', 'three', 'four'];
    for (const name of names)
      streams.get(home(name))!.write(
        protobufFrame({
          type: 'ADDED',
          object: protobufObject(protobufEnveloped({ name, namespace: 'ns', resourceVersion: '3' })),
        }),
      );
    const end = { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } };
    for (const cell of ['a', 'b', CONTROL_PLANE_SOURCE])
      streams
        .get(cell)!
        .write(protobufFrame({ type: 'BOOKMARK', object: protobufObject(protobufEnveloped(end)) }));
    for (let i = 0; i < 100 && written.length < names.length + 1; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    abort.abort();
    await done;
    const events = await collect(written);
    expect(events.map((event) => event.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ADDED', 'BOOKMARK']);
    const objects = events.map((event) => event.object as ReturnType<typeof protobufObject>);
    expect(
      objects
        .slice(0, 4)
        .map((object) => object.metadata.name)
        .sort(),
    ).toEqual([...names].sort());
    const last = objects[4]!;
    expect(last.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    expect(decodeCellVersions(last.metadata.resourceVersion!)).toEqual(
      new Map([
        [CONTROL_PLANE_SOURCE, '9'],
        ['a', '9'],
        ['b', '9'],
      ]),
    );
    // Every event is one frame: a length, then the WatchEvent.
    expect(written[0]!.readUInt32BE(0)).toBe(written[0]!.length - 4);
    expect(lengthDelimited(1, Buffer.from('ADDED')).equals(written[0]!.subarray(4, 11))).toBe(true);
  });
});
