import { readIfExists } from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';

import { requestObjectPath } from '../request/object-path.ts';
import { showObject } from '../views/client-view.ts';
import type { CellNamespaces } from './cell-namespaces.ts';
import { cellWriteBody } from './cell-writes.ts';
import { hasRequestBody } from './client-exchange.ts';
import { outcomeOf, refusal, type Destination, type Refusal } from '../routing/destination.ts';
import { SHOWN_ANSWER, sendRefusal } from './send-refusal.ts';
import {
  abortOnClose,
  relay,
  relayUnlessFenced,
  sendJson,
  sendUpstream,
  type BufferedBody,
} from './forward.ts';
import { heldDependentsFinalizer, holdForCollector } from './held-dependents-deletes.ts';
import type { ObjectDestinations } from '../destinations/object-destinations.ts';
import { cellLeftRefusal, fenceRefusal, type ObjectPlan } from '../routing/object-refusals.ts';
import { cellVersionBody, cellVersionTarget } from './version-translation.ts';
import { sendDrawingQuota, type QuotaDrawing } from './quota-draws.ts';
import { NodePortClaims, cellServiceWrite } from './node-port-claims.ts';
import { withQuery } from '../request/query-param.ts';
import { type ClientResponse } from '../server/client-request.ts';
import { type RequestOutcome } from '../server/request-outcome.ts';
import type { RequestScope } from '../server/request-scope.ts';

export interface ObjectRequestsOptions {
  readonly destinations: ObjectDestinations;
  /** Creates a control-plane namespace in a cell that does not have it yet, before a write into it. */
  readonly cellNamespaces?: Pick<CellNamespaces, 'ensure'> | undefined;
  readonly maxBodyBytes: number;
  /** Moves unused quota share into a cell whose quota admission refused a write (quota-draws.ts). */
  readonly quota?: QuotaDrawing | undefined;
  /** Claims Services' node ports in the control plane before a cell gives them out (node-port-claims.ts). */
  readonly nodePorts?: NodePortClaims | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * Requests for one cellular object by its name in the path (reads, updates, patches, deletes and their
 * subresources): sent to its cell, a body in the cell's terms (versions, kept annotations), the answer in
 * the client's; a write the cell fences mid-move is refused as the router would have.
 */
export class ObjectRequests {
  private readonly options: ObjectRequestsOptions;

  constructor(options: ObjectRequestsOptions) {
    this.options = options;
  }

  /** Serves one object's request at the destination the routing rule chose for it (ObjectDestinations). */
  async serve(plan: ObjectPlan, destination: Destination, scope: RequestScope): Promise<RequestOutcome> {
    const { request, response, impersonation } = scope;
    const { destinations, maxBodyBytes } = this.options;
    if (destination.kind === 'refuse') return sendRefusal(response, destination);
    if (destination.kind === 'backup') {
      const shown = structuredClone(destination.object);
      showObject(shown);
      sendJson(response, 200, shown);
      return outcomeOf(destination, 200);
    }
    let bytes: Buffer | undefined;
    if (plan.access === 'write' && hasRequestBody(request)) {
      // An object from a list or watch through the router carries a composite resourceVersion: the cell
      // compares its own. Write bodies are read whole (kube-apiserver's 3 MiB cap) to find it.
      const read = await scope.body.read(maxBodyBytes);
      if (!Buffer.isBuffer(read)) return sendRefusal(response, read);
      bytes = read;
    }
    const sent = await this.send(plan, destination, scope, bytes);
    if ('outcome' in sent) return sent.outcome;
    // Not in its ring cell: a CronJob's Job is where the CronJob's cell made it. Nothing was written there
    // (a 404), so the same request goes on to the cell holding it.
    const signal = scope.signal;
    const made = await destinations.madeElsewhere(plan, destination.cell, impersonation, signal);
    if (made) {
      await sent.notFound.body.dump();
      // Not looking elsewhere again: this answer, a 404 too, is relayed.
      const again = await this.send(plan, made, scope, bytes, false);
      if ('outcome' in again) return again.outcome;
    }
    await relay(sent.notFound, response);
    return outcomeOf(destination, 404);
  }

  /**
   * Sends the request to `destination`, its body in that cell's terms, and relays the answer. A 404 that
   * another cell may answer (`lookElsewhere`, the object's resource also made by cells) is handed back
   * unread instead.
   */
  private async send(
    plan: ObjectPlan,
    destination: Extract<Destination, { kind: 'cell' }>,
    scope: RequestScope,
    bytes: Buffer | undefined,
    lookElsewhere = plan.alsoMadeByCells,
  ): Promise<{ outcome: RequestOutcome } | { notFound: Dispatcher.ResponseData }> {
    const { request, response, impersonation, authorize } = scope;
    const { destinations, cellNamespaces } = this.options;
    // Updates and patches (server-side apply creates) need the namespace too; deletes and reads do not.
    if (plan.access === 'write' && plan.info.verb !== 'delete') {
      const refusedHere = await cellNamespaces?.ensure(destination.cell, plan.info.namespace, authorize);
      if (refusedHere) return refused(response, refusedHere);
    }
    let body: BufferedBody | undefined;
    if (bytes) {
      const translated = cellVersionBody(request.headers['content-type'], bytes, destination.cell, {
        resource: plan.info.resource,
        group: plan.info.apiGroup,
        name: plan.info.name,
      });
      if (translated && 'status' in translated)
        return refused(response, refusal(translated.status, 'stale-version', destination.cell));
      const written = await cellWriteBody(
        plan.info,
        request.method,
        request.headers['content-type'],
        translated?.body ?? bytes,
        { id: destination.cell, client: destination.client },
        impersonation,
        authorize,
      );
      if ('status' in written)
        return refused(response, refusal(written.status, 'bad-body', destination.cell));
      body = { bytes: written.bytes };
    }
    let settle = (_code: number): Promise<void> => Promise.resolve();
    const { nodePorts } = this.options;
    if (nodePorts && body && NodePortClaims.concerns(plan.info)) {
      const prepared = await nodePorts.prepare(
        cellServiceWrite({
          info: plan.info,
          request,
          contentType: request.headers['content-type'],
          body,
          authorize,
          client: destination.client,
          headers: { ...impersonation, ...SHOWN_ANSWER },
          signal: scope.signal,
        }),
      );
      if (prepared.kind === 'refuse')
        return refused(response, refusal(prepared.status, 'node-ports', destination.cell));
      if (prepared.kind === 'cell-answer') {
        if (!(await relayUnlessFenced(prepared.upstream, response, true, destination.cell)))
          return refused(response, fenceRefusal(plan, destination.cell, 'cell-fence', destination.routeCase));
        return { outcome: outcomeOf(destination, prepared.upstream.statusCode) };
      }
      if (prepared.body) body = prepared.body;
      settle = (code) => prepared.settle(code);
    }
    // Held dependents are orphaned, or deleted first, by cellfed's collector, which the finalizer waits for.
    const holdFor =
      plan.info.verb === 'delete' && plan.info.subresource === ''
        ? heldDependentsFinalizer(request.url ?? '/', body?.bytes)
        : undefined;
    if (holdFor)
      await holdForCollector(
        destination.client,
        requestObjectPath(plan.info, plan.info.namespace, plan.info.name),
        impersonation,
        holdFor,
        scope.signal,
      );
    // A read at a listed item's composite version reads the cell at its own; a patch sent as an update
    // goes without the apply patch's `force`, which an update does not take.
    const target =
      plan.info.verb === 'get'
        ? cellVersionTarget(request.url ?? '/', destination.cell)
        : body?.method === 'PUT' && request.method === 'PATCH'
          ? { target: withQuery(request.url ?? '/', 'force', undefined) }
          : undefined;
    if (target && 'status' in target)
      return refused(response, refusal(target.status, 'bad-version', destination.cell));
    // The object itself and its status are shown in their client view; other subresources (scale, a
    // Service's proxy) are not objects of the resource and stream through.
    const shown = plan.info.subresource === '' || plan.info.subresource === 'status';
    // One object (or a Scale of it) carries its version as clients see it; a stream (a watch) does not.
    const versioned =
      plan.info.verb !== 'watch' && (shown || plan.info.subresource === 'scale')
        ? destination.cell
        : undefined;
    let upstream;
    try {
      const send = () =>
        sendUpstream(
          destination.client,
          request,
          shown || versioned ? { ...impersonation, ...SHOWN_ANSWER } : impersonation,
          // Its own signal per attempt, made as it starts: a delete whose dependents were just held for the
          // collector goes on even if the caller left during the hold, so the hold is never left alone.
          abortOnClose(response),
          body,
          target?.target,
        );
      // A write whose body is held may be retried after a quota draw (a Service made a NodePort, a claim grown).
      upstream =
        body && plan.access === 'write'
          ? await sendDrawingQuota(send, this.options.quota, {
              cell: destination.cell,
              namespace: plan.info.namespace,
              authorize,
              url: request.url ?? '/',
              log: this.options.logger,
            })
          : await send();
    } catch (error) {
      // Its connection closed as it left: every object it held had moved (and its copies refuse writes).
      if (!response.headersSent && destinations.hasLeft(destination.cell))
        return refused(response, cellLeftRefusal(plan, destination.cell));
      throw error;
    }
    if (lookElsewhere && upstream.statusCode === 404) return { notFound: upstream };
    // Before the caller hears of it: a port given back or freed can be asked for at once.
    await settle(upstream.statusCode);
    if (nodePorts && plan.info.verb === 'delete')
      await nodePorts.deleted(plan.info, request.url ?? '/', upstream.statusCode, authorize, async () => {
        // A 200 is no proof it is gone (finalizers hold it; kube answers 202 only to orphanDependents=false).
        const path = requestObjectPath(plan.info, plan.info.namespace, plan.info.name);
        return (await readIfExists(destination.client, path, { signal: scope.signal })) === undefined;
      });
    if (plan.access !== 'write') await relay(upstream, response, shown, undefined, versioned);
    else if (!(await relayUnlessFenced(upstream, response, shown, versioned)))
      return refused(response, fenceRefusal(plan, destination.cell, 'cell-fence', destination.routeCase));
    return { outcome: outcomeOf(destination, upstream.statusCode) };
  }
}

function refused(response: ClientResponse, refusal: Refusal): { outcome: RequestOutcome } {
  return { outcome: sendRefusal(response, refusal) };
}
