import {
  CONTROL_PLANE_SLOT,
  MAX_OWN_VERSION,
  VERSION_SLOT_BITS,
  objectVersion,
  parseObjectVersion,
  versionSlot,
} from './object-versions.ts';

describe('object versions', () => {
  it('carries the apiserver and its own version in one decimal number', () => {
    const slot = versionSlot('cell-2');
    const version = objectVersion(slot, '17923')!;
    expect(version).toMatch(/^[0-9]+$/);
    expect(version).toBe(String(17923 * 2 ** VERSION_SLOT_BITS + slot));
    expect(parseObjectVersion(version)).toEqual({ slot, ownVersion: '17923' });
    expect(parseObjectVersion(objectVersion(CONTROL_PLANE_SLOT, '5')!)).toEqual({ slot: 0, ownVersion: '5' });
  });

  it('keeps its precision past 2^53 and stays below 2^63', () => {
    const own = MAX_OWN_VERSION.toString();
    const version = objectVersion(1048575, own)!;
    expect(BigInt(version)).toBe((MAX_OWN_VERSION << 20n) + 1048575n);
    expect(BigInt(version) < 1n << 63n).toBe(true);
    expect(parseObjectVersion(version)).toEqual({ slot: 1048575, ownVersion: own });
    expect(objectVersion(1, (MAX_OWN_VERSION + 1n).toString())).toBeUndefined();
  });

  it('orders one apiserver’s versions as the apiserver does', () => {
    const slot = versionSlot('cell-1');
    const versions = ['9', '10', '99', '100', '123456789012'].map((v) => BigInt(objectVersion(slot, v)!));
    expect([...versions].sort((a, b) => (a < b ? -1 : 1))).toEqual(versions);
  });

  it('is not made of what no apiserver gives out', () => {
    for (const bad of ['', '-5', 'cf1.abc', '1e3', ' 1', '123456789012345678901'])
      expect(objectVersion(1, bad)).toBeUndefined();
    for (const bad of ['', '-5', 'cf1.abc', '0x10'] as const) expect(parseObjectVersion(bad)).toBeUndefined();
  });

  it('gives a cell a slot from 1 to 2^20 - 1 by its id alone', () => {
    const slots = ['cell-1', 'cell-2', 'us-east-1a', 'a'].map(versionSlot);
    for (const slot of slots) {
      expect(slot).toBeGreaterThanOrEqual(1);
      expect(slot).toBeLessThan(2 ** VERSION_SLOT_BITS);
    }
    // Pinned (xxh64 is pinned across processes and platforms by @cellfed/hashing): a change would make
    // every version a router handed out name another cell.
    expect(slots.slice(0, 2)).toEqual([610249, 712320]);
  });
});
