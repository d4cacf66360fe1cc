import { shownVersion } from './source-versions.ts';
import { lengthDelimited, varintField } from '../request/protobuf-wire.ts';
import { protobufItem } from '../testing/protobuf-item.ts';
import {
  encodeProtobufList,
  isProtobuf,
  parseProtobufList,
  protobufStatusJson,
  withProtobufItemVersion,
} from './protobuf-list.ts';

describe('protobuf lists', () => {
  it('reads back what it writes: kind, versions, token, and each item with its metadata', () => {
    const items = [
      protobufItem({ name: 'a', namespace: 'shop', resourceVersion: '7', creationSeconds: 1_764_000_000 }),
      protobufItem({ name: 'b', namespace: 'shop', labels: { 'cellfed.io/rebalance-status': 'migrating' } }),
    ];
    const body = encodeProtobufList({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      resourceVersion: 'cf1.x',
      continue: 'next',
      items,
    });
    expect(isProtobuf(body)).toBe(true);
    const page = parseProtobufList(body);
    expect(page).toMatchObject({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      resourceVersion: 'cf1.x',
      continue: 'next',
    });
    expect(page.items).toEqual([
      { metadata: { name: 'a', namespace: 'shop', creationTimestamp: '2025-11-24T16:00:00Z' } },
      { metadata: { name: 'b', namespace: 'shop', labels: { 'cellfed.io/rebalance-status': 'migrating' } } },
    ]);
    expect(page.raw).toEqual(items);
  });

  it('reads of each owner reference whether it is the controller: what tells what a cell made', () => {
    const items = [
      protobufItem({ name: 'made', owners: [{ name: 'nightly', controller: true }] }),
      protobufItem({ name: 'held', owners: [{ name: 'x', controller: false }, { name: 'y' }] }),
    ];
    const page = parseProtobufList(
      encodeProtobufList({ kind: 'JobList', apiVersion: 'batch/v1', resourceVersion: '', items }),
    );
    expect(page.items).toEqual([
      { metadata: { name: 'made', ownerReferences: [{ controller: true }] } },
      { metadata: { name: 'held', ownerReferences: [{ controller: false }, { controller: false }] } },
    ]);
  });

  it('gives an item its version as clients see it', () => {
    const item = withProtobufItemVersion(protobufItem({ name: 'a', resourceVersion: '7' }), 'cell-1');
    // Decoders take the last occurrence of a field.
    const page = parseProtobufList(
      encodeProtobufList({ kind: 'L', apiVersion: 'v1', resourceVersion: '', items: [item] }),
    );
    expect(page.raw[0]!.toString('latin1')).toContain(shownVersion('cell-1', '7'));
    const without = protobufItem({ name: 'a' });
    expect(withProtobufItemVersion(without, 'cell-1')).toBe(without);
  });

  it('reads a Status a cell refused with as JSON', () => {
    const status = Buffer.concat([
      lengthDelimited(2, Buffer.from('Failure')),
      lengthDelimited(3, Buffer.from('configmaps is forbidden')),
      lengthDelimited(4, Buffer.from('Forbidden')),
      varintField(6, 403),
    ]);
    const body = Buffer.concat([Buffer.from('k8s\0', 'binary'), lengthDelimited(2, status)]);
    expect(JSON.parse(protobufStatusJson(body))).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'configmaps is forbidden',
      reason: 'Forbidden',
      code: 403,
    });
  });
});
