import { hash64 } from '@cellfed/hashing';

/**
 * The resourceVersion clients see for one version of one object: a decimal number, as one apiserver's,
 * that names the apiserver holding it and that apiserver's own version:
 *
 *     version = ownVersion × 2^20 + slot
 *
 * `slot` is 0 for the control plane and, for a cell, 1 + (xxh64(cell id) mod (2^20 − 1)): fixed by the id
 * alone, so every router and controller computes it the same, before and after any CellSet change, and a
 * version handed out before a cell left never names another cell (a CellSet whose cells share a slot is
 * refused). Every answer, list item and watch event of that object version carries this one number.
 *
 * 2^20 slots keep a clash unlikely (about 1 in 5,000 for twenty cells) and leave 2^43 own versions (etcd
 * revisions) below 2^63, so a client that parses a version as a signed 64-bit integer still can.
 */
export const VERSION_SLOT_BITS = 20;
const SLOTS = 1n << BigInt(VERSION_SLOT_BITS);
/** The control plane's slot: what it makes for itself (`kube-root-ca.crt`) is shown with it. */
export const CONTROL_PLANE_SLOT = 0;
/** The largest own version that can be carried (an etcd revision: 8.8 trillion writes). */
export const MAX_OWN_VERSION = (1n << BigInt(63 - VERSION_SLOT_BITS)) - 1n;

/** A cell's slot in the resourceVersions clients see, from its id. */
export function versionSlot(cellId: string): number {
  return 1 + Number(hash64(cellId) % (SLOTS - 1n));
}

/**
 * The version clients see for `ownVersion` (an apiserver's own decimal resourceVersion) of the apiserver at
 * `slot`; undefined for anything that is not one apiserver's version (empty, too large).
 */
export function objectVersion(slot: number, ownVersion: string): string | undefined {
  if (!/^[0-9]{1,20}$/.test(ownVersion)) return undefined;
  const own = BigInt(ownVersion);
  if (own > MAX_OWN_VERSION) return undefined;
  return ((own << BigInt(VERSION_SLOT_BITS)) + BigInt(slot)).toString();
}

/** The slot and the apiserver's own version in a version clients were given; undefined if not decimal. */
export function parseObjectVersion(version: string): { slot: number; ownVersion: string } | undefined {
  if (!/^[0-9]{1,20}$/.test(version)) return undefined;
  const value = BigInt(version);
  return {
    slot: Number(value & (SLOTS - 1n)),
    ownVersion: (value >> BigInt(VERSION_SLOT_BITS)).toString(),
  };
}
