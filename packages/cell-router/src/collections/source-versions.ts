import { CONTROL_PLANE_SLOT, objectVersion, parseObjectVersion, versionSlot } from '@cellfed/api';

import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';

const SLOTS = new Map<string, number>();

/** A collection source's slot in the versions clients see: the control plane's, or a cell's by its id. */
export function sourceSlot(source: string): number {
  if (source === CONTROL_PLANE_SOURCE) return CONTROL_PLANE_SLOT;
  let slot = SLOTS.get(source);
  if (slot === undefined) SLOTS.set(source, (slot = versionSlot(source)));
  return slot;
}

/**
 * The version clients see of `source`'s own version `own` of one object (see @cellfed/api object-versions);
 * undefined for what is not one apiserver's version.
 */
export function shownVersion(source: string, own: string): string | undefined {
  return objectVersion(sourceSlot(source), own);
}

/**
 * Which of `sources` (the control plane and the live cells) an object version clients were given names, and
 * its own version there; undefined for a number no source's slot matches (a cell that left, or a number the
 * router never gave out).
 */
export function versionSource(
  version: string,
  sources: readonly string[],
): { source: string; own: string } | undefined {
  const parsed = parseObjectVersion(version);
  if (!parsed) return undefined;
  const source = sources.find((candidate) => sourceSlot(candidate) === parsed.slot);
  return source === undefined ? undefined : { source, own: parsed.ownVersion };
}
