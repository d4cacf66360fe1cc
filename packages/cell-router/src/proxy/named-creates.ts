import type { KubeClient } from '@cellfed/controller-kit';
import type { Logger } from 'pino';

import { generateName } from '../request/generate-name.ts';
import { namesFromBody, withName } from '../request/object-name.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';
import { planRoute, type NamespaceLabels, type RoutingState } from '../routing/route-plan.ts';
import { badRequest, failure, parseStatus } from '../status/kube-status.ts';
import type { CellMadeRequests } from './cell-made-requests.ts';
import type { CellNamespaces } from './cell-namespaces.ts';
import { cellWriteBody } from './cell-writes.ts';
import { outcomeOf, refusal } from '../routing/destination.ts';
import { SHOWN_ANSWER, sendRefusal } from './send-refusal.ts';
import { relay, sendJson, sendUpstream, type BufferedBody } from './forward.ts';
import type { CellMadeDestinations } from '../destinations/cell-made-destinations.ts';
import type { ObjectDestinations } from '../destinations/object-destinations.ts';
import { restoringRefusal } from '../routing/object-refusals.ts';
import { toControlPlane } from './to-control-plane.ts';
import { sendDrawingQuota, type QuotaDrawing } from './quota-draws.ts';
import { NodePortClaims, cellServiceWrite } from './node-port-claims.ts';
import { BodyNameError } from '../errors.ts';
import { type RequestOutcome } from '../server/request-outcome.ts';
import type { RequestScope } from '../server/request-scope.ts';

/** kube-apiserver tries 8 names for a generateName create before it gives up; so does the router. */
const GENERATE_NAME_ATTEMPTS = 8;

export interface NamedCreatesOptions {
  readonly controlPlane: KubeClient;
  readonly namespaceLabels?: NamespaceLabels | undefined;
  readonly destinations: ObjectDestinations;
  readonly cellMade: CellMadeRequests;
  readonly cellMadeDestinations: CellMadeDestinations;
  /** Creates a control-plane namespace in a cell that does not have it yet, before a write into it. */
  readonly cellNamespaces?: Pick<CellNamespaces, 'ensure'> | undefined;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  /** Moves unused quota share into a cell whose quota admission refused a write (quota-draws.ts). */
  readonly quota?: QuotaDrawing | undefined;
  /** Claims Services' node ports in the control plane before a cell gives them out (node-port-claims.ts). */
  readonly nodePorts?: NodePortClaims | undefined;
}

/**
 * A create, whose object's name is in its body: the body is read for the name (or the router picks one for
 * `generateName`, so it knows where the object goes), then routed by it as a request for that object
 * would be. A picked name already taken is tried again with another, as kube-apiserver does.
 */
export class NamedCreates {
  private readonly options: NamedCreatesOptions;

  constructor(options: NamedCreatesOptions) {
    this.options = options;
  }

  async serve(info: ResourceRequestInfo, state: RoutingState, scope: RequestScope): Promise<RequestOutcome> {
    const { request, response, impersonation, authorize } = scope;
    const {
      controlPlane,
      namespaceLabels,
      destinations,
      cellMade,
      cellMadeDestinations,
      cellNamespaces,
      logger,
      maxBodyBytes,
    } = this.options;
    const body = await scope.body.read(maxBodyBytes);
    if (!Buffer.isBuffer(body)) return sendRefusal(response, body);
    const contentType = request.headers['content-type'];
    const signal = scope.signal;
    for (let attempt = 1; ; attempt++) {
      let name: string | undefined;
      let payload: BufferedBody = { bytes: body };
      let generated = false;
      try {
        const names = namesFromBody(contentType, body);
        name = names.name;
        if (!name && names.generateName) {
          // The router names the object itself, so it knows where it goes.
          name = generateName(names.generateName);
          generated = true;
          const named = withName(contentType, body, name);
          payload = { bytes: named.body, contentType: named.contentType };
        }
      } catch (error) {
        if (error instanceof BodyNameError)
          return sendRefusal(response, refusal(badRequest(error.message), 'bad-body'));
        throw error;
      }
      if (!name) {
        const status = failure(
          422,
          'Invalid',
          'metadata.name: Required value: name or generateName is required',
        );
        return sendRefusal(response, refusal(status, 'no-name'));
      }
      const plan = planRoute(info, state, namespaceLabels, name);
      // A name each apiserver has of its own (kube-root-ca.crt): the control plane's.
      if (plan.kind === 'control-plane')
        return {
          ...(await toControlPlane(controlPlane, plan.reason, scope, payload)),
          name,
        };
      // A Pod or Event a client creates itself: in the ring's cell, as a cellular object would be.
      if (plan.kind === 'cell-made')
        return {
          ...(await cellMade.serve(
            plan,
            await cellMadeDestinations.of(plan, impersonation, authorize, signal),
            scope,
            payload,
          )),
          name,
        };
      if (plan.kind !== 'object') throw new Error(`a named create planned as ${plan.kind}`);
      const destination = await destinations.of(plan, impersonation, authorize);
      if (destination.kind === 'backup')
        return sendRefusal(response, (await authorize()) ?? restoringRefusal(plan, destination));
      if (destination.kind === 'refuse') return sendRefusal(response, destination);
      const refused = await cellNamespaces?.ensure(destination.cell, info.namespace, authorize);
      if (refused) return sendRefusal(response, refused);
      const written = await cellWriteBody(
        plan.info,
        request.method,
        payload.contentType ?? contentType,
        payload.bytes,
        { id: destination.cell, client: destination.client },
        impersonation,
        authorize,
      );
      if ('status' in written)
        return sendRefusal(response, refusal(written.status, 'bad-body', destination.cell));
      let sent: BufferedBody = { ...payload, bytes: written.bytes };
      let settle = (_code: number): Promise<void> => Promise.resolve();
      const { nodePorts } = this.options;
      if (nodePorts && NodePortClaims.concerns(plan.info)) {
        const prepared = await nodePorts.prepare(
          cellServiceWrite({
            info: plan.info,
            request,
            contentType: sent.contentType ?? contentType,
            body: sent,
            authorize,
            client: destination.client,
            headers: { ...impersonation, ...SHOWN_ANSWER },
            signal,
          }),
        );
        if (prepared.kind === 'refuse')
          return sendRefusal(response, refusal(prepared.status, 'node-ports', destination.cell));
        if (prepared.kind === 'cell-answer') {
          await relay(prepared.upstream, response, true, undefined, destination.cell);
          return { ...outcomeOf(destination, prepared.upstream.statusCode), name };
        }
        if (prepared.body) sent = prepared.body;
        settle = (code) => prepared.settle(code);
      }
      const upstream = await sendDrawingQuota(
        () => sendUpstream(destination.client, request, { ...impersonation, ...SHOWN_ANSWER }, signal, sent),
        this.options.quota,
        {
          cell: destination.cell,
          namespace: info.namespace,
          authorize,
          url: request.url ?? '/',
          log: logger,
        },
      );
      // Before the caller hears of it: a port given back can be asked for at once.
      await settle(upstream.statusCode);
      if (generated && upstream.statusCode === 409) {
        const text = await upstream.body.text();
        if (attempt < GENERATE_NAME_ATTEMPTS && parseStatus(text)?.reason === 'AlreadyExists') {
          logger.debug(
            { cell: destination.cell, namespace: info.namespace, name, attempt },
            'generated name taken; trying another',
          );
          continue;
        }
        sendJson(response, 409, text);
        return { ...outcomeOf(destination, 409), name };
      }
      await relay(upstream, response, true, undefined, destination.cell);
      return { ...outcomeOf(destination, upstream.statusCode), name };
    }
  }
}
