import type { KubeClient } from '@cellfed/controller-kit';

import { serviceUnavailable } from '../status/kube-status.ts';
import { cellMadeTarget } from './cell-made.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import type { Authorize } from '../auth/request-authorization.ts';
import { RETRY_SOON, refusal, type Destination } from '../routing/destination.ts';
import { collectionSources, type RoutePlan, type RoutingState } from '../routing/route-plan.ts';
import { type Impersonation } from '../auth/impersonation.ts';

export type CellMadePlan = Extract<RoutePlan, { kind: 'cell-made' }>;

export interface CellMadeDestinationsOptions {
  readonly state: () => RoutingState | undefined;
  /** The client of a live cell, or of the control plane for {@link CONTROL_PLANE_SOURCE}. */
  readonly source: (id: string) => KubeClient | undefined;
}

/**
 * Where a request for one object of what the cells' controllers make goes (cell-made-resources.ts): the
 * source holding it (cell-made.ts asks each), else the ring's cell; a 503 while a source that may hold it
 * does not answer.
 */
export class CellMadeDestinations {
  private readonly options: CellMadeDestinationsOptions;

  constructor(options: CellMadeDestinationsOptions) {
    this.options = options;
  }

  /** Where the request goes; a refusal only to a caller allowed the request (see ObjectDestinations.of). */
  async of(
    plan: CellMadePlan,
    impersonation: Impersonation,
    authorize: Authorize,
    signal?: AbortSignal,
  ): Promise<Destination> {
    const destination = await this.route(plan, impersonation, signal);
    return destination.kind === 'refuse' ? ((await authorize()) ?? destination) : destination;
  }

  private async route(
    plan: CellMadePlan,
    impersonation: Impersonation,
    signal?: AbortSignal,
  ): Promise<Destination> {
    const state = this.options.state();
    const sources = state
      ? collectionSources(state, 'anywhere', { group: plan.info.apiGroup, resource: plan.info.resource })
      : [CONTROL_PLANE_SOURCE];
    const target = await cellMadeTarget(
      plan.info,
      plan.ringCell,
      sources,
      this.options.source,
      impersonation,
      signal,
    );
    if (target.kind === 'unknown') {
      const status = serviceUnavailable(
        `cannot tell which cell holds ${plan.info.resource} "${plan.info.name}": ${target.reason}`,
        1,
      );
      return { ...refusal(status, 'cell-made-unknown'), headers: RETRY_SOON };
    }
    const client = this.options.source(target.source);
    const cell = target.source === CONTROL_PLANE_SOURCE ? 'control-plane' : target.source;
    if (!client) {
      const status = serviceUnavailable(`cell ${cell} is not connected`, 1);
      return { ...refusal(status, 'cell-unavailable', cell), headers: RETRY_SOON };
    }
    return { kind: 'cell', client, cell, route: target.route };
  }
}
