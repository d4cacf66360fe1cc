import { MIRRORED_FROM_CONTROL_PLANE, MIRRORED_LABEL } from '@cellfed/api';
import {
  Informer,
  errorMessage,
  isAlreadyExists,
  resourceListWatch,
  type CellAware,
  type EngagedCell,
  type KubeClient,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import { NAMESPACES, type ObjectMeta } from '@cellfed/federation';

import type { Authorize } from '../auth/request-authorization.ts';
import type { Refusal } from '../routing/destination.ts';
import type { Registry } from 'prom-client';

/**
 * Which namespaces each cell has, so a write into a namespace that the control plane has and the cell does
 * not yet (the mirror is asynchronous) creates it in the cell first: `kubectl create ns x && kubectl -n x
 * create deploy …` works every time. A cached namespace costs nothing; a missing one costs one create.
 */
export class CellNamespaces implements CellAware {
  private readonly informers = new Map<string, { informer: Informer; client: KubeClient }>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly registry: Registry;
  private readonly log: Logger;
  /** The control plane's labels of a namespace, or undefined if it has none by that name. */
  private readonly controlPlaneNamespace: (name: string) => ObjectMeta | undefined;

  constructor(options: {
    registry: Registry;
    logger: Logger;
    controlPlaneNamespace: (name: string) => ObjectMeta | undefined;
  }) {
    this.registry = options.registry;
    this.log = options.logger;
    this.controlPlaneNamespace = options.controlPlaneNamespace;
  }

  engage(cell: EngagedCell): void {
    const informer = new Informer({
      cell: cell.id,
      resource: 'v1/namespaces',
      listWatch: resourceListWatch(cell.client, NAMESPACES, { metadataOnly: true }),
      logger: this.log,
      registry: this.registry,
    });
    const entry = { informer, client: cell.client };
    this.informers.set(cell.id, entry);
    void informer.run(cell.signal).finally(() => {
      if (this.informers.get(cell.id) === entry) this.informers.delete(cell.id);
    });
  }

  /**
   * Makes sure `namespace` exists in `cell` when the control plane has it, for a write that `authorize`
   * says the caller may make: the router creates it as itself, so never for a caller who may not (it gets
   * the refusal instead). Never throws: if the namespace cannot be created the write goes on and the cell
   * answers for itself (404 NotFound).
   */
  async ensure(cell: string, namespace: string, authorize: Authorize): Promise<Refusal | undefined> {
    if (namespace === '') return undefined;
    const entry = this.informers.get(cell);
    if (!entry) return undefined;
    const { informer, client } = entry;
    if (informer.hasSynced() && informer.has(`${cell}//${namespace}`)) return undefined;
    const source = this.controlPlaneNamespace(namespace);
    if (!source) return undefined;
    const refused = await authorize();
    if (refused) return refused;
    // A burst of writes into a new namespace shares one create.
    const key = `${cell}/${namespace}`;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.create(cell, client, namespace, source).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    await pending;
    return undefined;
  }

  private async create(
    cell: string,
    client: KubeClient,
    namespace: string,
    source: ObjectMeta,
  ): Promise<void> {
    try {
      await client.request('POST', '/api/v1/namespaces', {
        body: {
          apiVersion: 'v1',
          kind: 'Namespace',
          // Marked as the mirror marks its own, so the mirror deletes it when the control plane's goes: a
          // namespace that lived a moment there may be gone before the mirror ever saw it.
          metadata: {
            name: namespace,
            labels: { ...source.labels, [MIRRORED_LABEL]: MIRRORED_FROM_CONTROL_PLANE },
          },
        },
      });
      this.log.info({ cell, namespace }, 'namespace created in the cell ahead of a write');
    } catch (error) {
      if (isAlreadyExists(error)) return;
      this.log.warn(
        { cell, namespace, err: errorMessage(error) },
        'could not create the namespace in the cell',
      );
    }
  }
}
