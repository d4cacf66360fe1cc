import { NODE_PORTS_CLAIMED_AT_ANNOTATION } from '@cellfed/api';
import {
  ApiError,
  isNotFound,
  readIfExists,
  type Clock,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import {
  SERVICES,
  claimedService,
  hasNodePorts,
  nodePortClaim,
  nodePortsOf,
  resourcePath,
  type Service,
} from '@cellfed/federation';

import type { CellLookup } from '../cell-end.ts';
import type { NamespacedKey } from '../copies/copied-kind-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';

/** How long a new claim is left alone: the router writes its Service into a cell right after claiming. */
export const CLAIM_GRACE_MS = 60_000;
/** How often a claim whose Service holds node ports is looked at again (a collection delete frees none). */
export const CLAIM_RECHECK_MS = 10 * 60_000;

export interface NodePortClaimReconcilerOptions {
  plans: PlanHolder;
  controlPlane: Pick<KubeClient, 'request'>;
  /** A claim in the control plane (a Service in cellfed's namespace), from its cache. */
  claim: (namespace: string, name: string) => Service | undefined;
  cell: CellLookup;
  clock: Clock;
  /** Records an event on the CellSet (two Services of the federation holding one node port). */
  record: (type: 'Warning', reason: string, note: string) => Promise<void>;
}

/**
 * Frees the node ports of a Service no cell holds any more (docs/routing.md, "Node ports"): the router
 * claims them in the control plane before a cell gives them out and frees them when the Service goes
 * through it, but a delete of a whole collection, a router that stopped mid-write, or a cell that refused a
 * write the router could not undo leave a claim behind. A claim is freed once no live cell holds a Service
 * of its name with node ports; never while a cell is Down (its Services are in backups until promoted),
 * never within a minute of its last write. A claim whose Service holds other ports is set to them.
 */
export class NodePortClaimReconciler implements Reconciler<NamespacedKey> {
  private readonly options: NodePortClaimReconcilerOptions;

  constructor(options: NodePortClaimReconcilerOptions) {
    this.options = options;
  }

  async reconcile({ key, signal, log }: ReconcileRequest<NamespacedKey>): Promise<ReconcileResult> {
    const plan = this.options.plans.current();
    if (!plan) return {};
    const claim = this.options.claim(key.namespace, key.name);
    // Whose ports it holds: the Service of that namespace and name, in whichever cell.
    const of = claimedService(claim);
    if (!claim || !of || claim.metadata.deletionTimestamp) return {};
    const age = this.options.clock.now() - lastWritten(claim);
    if (!(age >= CLAIM_GRACE_MS)) return { requeueAfterMs: CLAIM_GRACE_MS - (age > 0 ? age : 0) };
    if (plan.liveCells.length < plan.spec.cells.length) return { requeueAfterMs: CLAIM_RECHECK_MS };
    const path = resourcePath(SERVICES, of.namespace, of.name);
    for (const id of plan.liveCells) {
      const cell = this.options.cell(id);
      if (!cell) return { requeueAfterMs: 5000 }; // a live cell's Service is not known: decide nothing
      const service = await readIfExists<Service>(cell.client, path, { signal });
      if (service && hasNodePorts(service.spec)) return this.heldBy(service, claim, key, { signal, log });
    }
    try {
      await this.options.controlPlane.request('DELETE', resourcePath(SERVICES, key.namespace, key.name), {
        // Only the claim read: one a write changed meanwhile (a create taking it over) stays.
        body: {
          kind: 'DeleteOptions',
          apiVersion: 'v1',
          preconditions: { uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion },
        },
        signal,
      });
    } catch (error) {
      if (isNotFound(error)) return {};
      if (error instanceof ApiError && error.statusCode === 409) return { requeueAfterMs: CLAIM_GRACE_MS };
      throw error;
    }
    log.info(
      { cell: 'control-plane', namespace: of.namespace, name: of.name, claim: key.name },
      'node ports freed: no cell holds the Service of this claim',
    );
    return {};
  }

  /**
   * A claim whose Service a cell holds: it must hold the ports the Service has. They differ when a write's
   * outcome never reached the router (its connection broke after the claim changed): the claim is made to
   * hold the Service's ports, which the allocator refuses only if another Service holds one (logged: two
   * Services of the federation then share a node port).
   */
  private async heldBy(
    service: Service,
    claim: Service,
    key: NamespacedKey,
    { signal, log }: Pick<ReconcileRequest<NamespacedKey>, 'signal' | 'log'>,
  ): Promise<ReconcileResult> {
    const ports = (object: Service) => [...nodePortsOf(object.spec)].sort((a, b) => a - b).join(',');
    if (ports(service) === ports(claim)) return { requeueAfterMs: CLAIM_RECHECK_MS };
    const held = nodePortClaim(service, key);
    const logged = {
      cell: 'control-plane',
      namespace: service.metadata.namespace,
      name: service.metadata.name,
    };
    try {
      await this.options.controlPlane.request('PUT', resourcePath(SERVICES, key.namespace, key.name), {
        body: { ...held, metadata: { ...claim.metadata, ...held.metadata } },
        signal,
      });
    } catch (error) {
      if (error instanceof ApiError && error.statusCode === 409) return { requeueAfterMs: CLAIM_GRACE_MS };
      if (!(error instanceof ApiError) || error.statusCode !== 422) throw error;
      log.warn(
        { ...logged, nodePorts: nodePortsOf(service.spec), err: error.message },
        'a Service holds node ports another Service of the federation holds too',
      );
      await this.options.record(
        'Warning',
        'NodePortsShared',
        `service ${service.metadata.namespace}/${service.metadata.name} holds node ports another Service of the federation holds too: ${error.message}`,
      );
      return { requeueAfterMs: CLAIM_RECHECK_MS };
    }
    log.info(
      { ...logged, nodePorts: nodePortsOf(service.spec) },
      'node-port claim set to its Service’s ports',
    );
    return { requeueAfterMs: CLAIM_RECHECK_MS };
  }
}

/**
 * When a claim was last written: created, taken over by a create (its claimed-at), or changed by any
 * write (its managed fields' times); the collector's grace counts from it.
 */
function lastWritten(claim: Service): number {
  const claimedAt = claim.metadata.annotations?.[NODE_PORTS_CLAIMED_AT_ANNOTATION];
  const managed = (claim.metadata as { managedFields?: { time?: string }[] }).managedFields ?? [];
  const times = [claim.metadata.creationTimestamp, claimedAt, ...managed.map((entry) => entry.time)]
    .map((time) => Date.parse(time ?? ''))
    .filter((time) => !Number.isNaN(time));
  return times.length > 0 ? Math.max(...times) : Number.NEGATIVE_INFINITY;
}
