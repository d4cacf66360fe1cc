import type { Logger } from 'pino';
import type { CellMadePlan } from '../destinations/cell-made-destinations.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { showOwnerUids, type OwnerUids } from '../views/owner-uids.ts';
import type { CellNamespaces } from './cell-namespaces.ts';
import { hasRequestBody } from './client-exchange.ts';
import { outcomeOf, refusal, type Destination, type Refusal } from '../routing/destination.ts';
import { SHOWN_ANSWER, sendRefusal } from './send-refusal.ts';
import { mayNameOwners } from '../views/cell-view.ts';
import { relay, sendUpstream, type BufferedBody } from './forward.ts';
import { cellVersionBody, cellVersionTarget } from './version-translation.ts';
import { cellOwnersReader, reservedMarksRefusal, markShapeOf } from './cell-writes.ts';
import { requestObjectPath } from '../request/object-path.ts';
import { sendDrawingQuota, type QuotaDrawing } from './quota-draws.ts';
import { type RequestOutcome } from '../server/request-outcome.ts';
import type { RequestScope } from '../server/request-scope.ts';

export interface CellMadeRequestsOptions {
  readonly ownerUids?: OwnerUids | undefined;
  readonly cellNamespaces?: Pick<CellNamespaces, 'ensure'> | undefined;
  readonly maxBodyBytes: number;
  /** Moves unused quota share into a cell whose quota admission refused a write (quota-draws.ts). */
  readonly quota?: QuotaDrawing | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * Requests for one object of what the cells' controllers make (routing/cell-made-resources.ts): sent to the
 * source that holds it (routing/cell-made-destinations.ts found it), with the owner uids clients know on the way out and the
 * cell's on the way in (views/owner-uids.ts).
 */
export class CellMadeRequests {
  private readonly options: CellMadeRequestsOptions;

  constructor(options: CellMadeRequestsOptions) {
    this.options = options;
  }

  /**
   * One cell-made object: forwarded to where it is. Its owner references are the cell's own (its owner is
   * in that cell), so a write body only has a composite resourceVersion to translate.
   */
  async serve(
    plan: CellMadePlan,
    destination: Destination,
    scope: RequestScope,
    read?: BufferedBody,
  ): Promise<RequestOutcome> {
    const { request, response, impersonation, authorize } = scope;
    const signal = scope.signal;
    if (destination.kind !== 'cell') return sendRefusal(response, destination as Refusal);
    const source = destination.cell === 'control-plane' ? CONTROL_PLANE_SOURCE : destination.cell;
    const { verb, subresource, namespace } = plan.info;
    if (verb !== 'get' && verb !== 'delete' && source !== CONTROL_PLANE_SOURCE) {
      const refused = await this.options.cellNamespaces?.ensure(destination.cell, namespace, authorize);
      if (refused) return sendRefusal(response, refused);
    }
    let body = read;
    if (!body && verb !== 'get' && hasRequestBody(request)) {
      const bytes = await scope.body.read(this.options.maxBodyBytes);
      if (!Buffer.isBuffer(bytes)) return sendRefusal(response, bytes);
      body = { bytes };
    }
    if (body) {
      const contentType = body.contentType ?? request.headers['content-type'];
      const translated = cellVersionBody(contentType, body.bytes, source, {
        resource: plan.info.resource,
        group: plan.info.apiGroup,
        name: plan.info.name,
      });
      if (translated && 'status' in translated)
        return sendRefusal(response, refusal(translated.status, 'stale-version', destination.cell));
      if (translated) body = { ...body, bytes: translated.body };
      const shape = markShapeOf(request.method, contentType);
      const marked =
        shape &&
        (await reservedMarksRefusal(
          plan.info,
          shape,
          request.method,
          contentType,
          body.bytes,
          cellOwnersReader(
            destination.client,
            destination.cell,
            requestObjectPath(plan.info, namespace, plan.info.name),
            impersonation,
          ),
          authorize,
        ));
      if (marked) return sendRefusal(response, refusal(marked, 'bad-body', destination.cell));
      // Its owners are read as the router: only for a caller allowed the write.
      if (mayNameOwners(body.bytes, contentType)) {
        const refused = await authorize();
        if (refused) return sendRefusal(response, refused);
      }
      body = await this.storeOwnerUids(destination.cell, namespace, contentType, body);
    }
    // A read at a listed item's composite version reads the cell at its own.
    const target = verb === 'get' ? cellVersionTarget(request.url ?? '/', source) : undefined;
    if (target && 'status' in target)
      return sendRefusal(response, refusal(target.status, 'bad-version', destination.cell));
    const shown = subresource === '' || subresource === 'status';
    const send = () =>
      sendUpstream(
        destination.client,
        request,
        shown ? { ...impersonation, ...SHOWN_ANSWER } : impersonation,
        signal,
        body,
        target?.target,
      );
    // A Pod a client creates counts against its namespace's quotas in its cell.
    const upstream =
      body && verb !== 'get' && source !== CONTROL_PLANE_SOURCE
        ? await sendDrawingQuota(send, this.options.quota, {
            cell: destination.cell,
            namespace,
            authorize,
            url: request.url ?? '/',
            log: this.options.logger,
          })
        : await send();
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
      shown && verb !== 'watch' ? source : undefined,
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
    if (!mayNameOwners(body.bytes, contentType)) return body;
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
