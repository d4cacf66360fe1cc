import { type KubeClient } from '@cellfed/controller-kit';

import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { collectionSources, type RoutePlan, type RoutingState } from '../routing/route-plan.ts';
import { requestEntityTooLarge, serviceUnavailable } from '../status/kube-status.ts';
import type { RequestOutcome } from '../tracing/request-span.ts';
import { showOwnerUids, type OwnerUids } from '../views/owner-uids.ts';
import { cellMadeTarget } from '../routing/cell-made.ts';
import type { CellNamespaces } from './cell-namespaces.ts';
import { hasRequestBody, type ClientRequest, type ClientResponse } from './client-exchange.ts';
import {
  RETRY_SOON,
  outcomeOf,
  refusal,
  type Destination,
  type Impersonation,
  type Refusal,
} from '../routing/destination.ts';
import { SHOWN_ANSWER, sendRefusal } from './send-refusal.ts';
import { abortOnClose, readBody, relay, sendUpstream, type BufferedBody } from './forward.ts';
import { cellVersionBody } from './version-translation.ts';

type CellMadePlan = Extract<RoutePlan, { kind: 'cell-made' }>;

export interface CellMadeRequestsOptions {
  readonly state: () => RoutingState | undefined;
  /** The client of a live cell, or of the control plane for {@link CONTROL_PLANE_SOURCE}. */
  readonly source: (id: string) => KubeClient | undefined;
  readonly ownerUids?: OwnerUids | undefined;
  readonly cellNamespaces?: Pick<CellNamespaces, 'ensure'> | undefined;
  readonly maxBodyBytes: number;
}

/**
 * Requests for one object of what the cells' controllers make (routing/cell-made-resources.ts): sent to the
 * source that holds it (cell-made.ts finds it), with the owner uids clients know on the way out and the
 * cell's on the way in (views/owner-uids.ts).
 */
export class CellMadeRequests {
  private readonly options: CellMadeRequestsOptions;

  constructor(options: CellMadeRequestsOptions) {
    this.options = options;
  }

  /** Where a request for one cell-made object goes: the source holding it, else the ring's cell. */
  async destination(
    plan: CellMadePlan,
    impersonation: Impersonation,
    signal?: AbortSignal,
  ): Promise<Destination> {
    const state = this.options.state();
    const sources = state ? collectionSources(state, 'anywhere') : [CONTROL_PLANE_SOURCE];
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

  /**
   * One cell-made object: forwarded to where it is. Its owner references are the cell's own (its owner is
   * in that cell), so a write body only has a composite resourceVersion to translate.
   */
  async serve(
    plan: CellMadePlan,
    request: ClientRequest,
    response: ClientResponse,
    impersonation: Impersonation,
    read?: BufferedBody,
  ): Promise<RequestOutcome> {
    const signal = abortOnClose(response);
    const destination = await this.destination(plan, impersonation, signal);
    if (destination.kind !== 'cell') return sendRefusal(response, destination as Refusal);
    const source = destination.cell === 'control-plane' ? CONTROL_PLANE_SOURCE : destination.cell;
    const { verb, subresource, namespace } = plan.info;
    if (verb !== 'get' && verb !== 'delete' && source !== CONTROL_PLANE_SOURCE)
      await this.options.cellNamespaces?.ensure(destination.cell, namespace);
    let body = read;
    if (!body && verb !== 'get' && hasRequestBody(request)) {
      const bytes = await readBody(request, this.options.maxBodyBytes);
      if (bytes === 'too-large')
        return sendRefusal(response, refusal(requestEntityTooLarge(this.options.maxBodyBytes), 'too-large'));
      body = { bytes };
    }
    if (body) {
      const contentType = body.contentType ?? request.headers['content-type'];
      const translated = cellVersionBody(contentType, body.bytes, source);
      if (translated && 'status' in translated)
        return sendRefusal(response, refusal(translated.status, 'stale-version', destination.cell));
      if (translated) body = { ...body, bytes: translated.body };
      body = await this.storeOwnerUids(destination.cell, namespace, contentType, body);
    }
    const shown = subresource === '' || subresource === 'status';
    const upstream = await sendUpstream(
      destination.client,
      request,
      shown ? { ...impersonation, ...SHOWN_ANSWER } : impersonation,
      signal,
      body,
    );
    const uids = this.options.ownerUids;
    // Never a copy, and no owner reference of it is held (it was written as it is): only the owner uids of
    // moved owners are shown as clients know them.
    await relay(
      upstream,
      response,
      false,
      shown && uids && source !== CONTROL_PLANE_SOURCE
        ? (json) => showOwnerUids(uids, destination.cell, json)
        : undefined,
    );
    return outcomeOf(destination, upstream.statusCode);
  }

  /**
   * A JSON body written into a cell with the cell's uids in its owner references (see OwnerUids): an update
   * or a merge patch of what a client read through the router.
   */
  private async storeOwnerUids(
    cell: string,
    namespace: string,
    contentType: string | undefined,
    body: BufferedBody,
  ): Promise<BufferedBody> {
    const uids = this.options.ownerUids;
    if (!uids || cell === 'control-plane' || !String(contentType ?? '').includes('json')) return body;
    if (!body.bytes.includes('"ownerReferences"')) return body;
    let value: unknown;
    try {
      value = JSON.parse(body.bytes.toString());
    } catch {
      return body; // the cell answers what it makes of it
    }
    return (await uids.store(cell, namespace, value))
      ? { ...body, bytes: Buffer.from(JSON.stringify(value)) }
      : body;
  }
}
