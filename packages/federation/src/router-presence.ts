import { LOADED_GENERATION_ANNOTATION } from '@cellfed/api';

import type { KubeObject } from './kube-object.ts';

/*
 * How a router replica says which CellSet generation it routes with: a Lease per replica in the secret
 * namespace, labelled with its CellSet, annotated with the generation loaded, renewed while it runs. The
 * router publishes it (controller-kit's RouterLeasePublisher); the rebalance controller opens a generation's
 * gate only when no live replica is behind.
 */

export interface RouterLease extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
}

/** What one router replica has said about itself. */
export interface RouterPresence {
  readonly identity: string;
  readonly generation: number;
  /** Milliseconds since the epoch after which the replica counts as gone. */
  readonly expiresAt: number;
}

/** Reads a router Lease; undefined when it is not one or is malformed. */
function routerPresence(lease: RouterLease): RouterPresence | undefined {
  const generation = Number(lease.metadata.annotations?.[LOADED_GENERATION_ANNOTATION]);
  const renewed = Date.parse(lease.spec?.renewTime ?? '');
  const duration = lease.spec?.leaseDurationSeconds;
  if (!Number.isInteger(generation) || Number.isNaN(renewed) || !duration) return undefined;
  return {
    identity: lease.spec?.holderIdentity ?? lease.metadata.name ?? '',
    generation,
    expiresAt: renewed + duration * 1000,
  };
}

/**
 * The live router replicas that still route with a CellSet generation older than `generation`: the
 * rebalance controller moves nothing while this is not empty. Expired Leases (crashed replicas) do not
 * count.
 */
export function routersBehind(
  leases: readonly RouterLease[],
  generation: number,
  now: number,
): RouterPresence[] {
  return leases
    .map(routerPresence)
    .filter((presence): presence is RouterPresence => presence !== undefined && presence.expiresAt > now)
    .filter((presence) => presence.generation < generation);
}

/** A Lease name from a replica identity (a pod name, or host-pid): lowercase DNS label characters. */
export function routerLeaseName(identity: string): string {
  const cleaned = identity
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `cell-router-${cleaned}`.slice(0, 63).replace(/-+$/, '');
}
