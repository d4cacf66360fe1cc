import { MIRRORED_FROM_CONTROL_PLANE, MIRRORED_LABEL, NAMESPACE_UID_ANNOTATION } from '@cellfed/api';
import {
  Informer,
  errorMessage,
  isAlreadyExists,
  resourceListWatch,
  type CellAware,
  type EngagedCell,
  type KubeClient,
  type ListWatch,
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
  /** The control plane's metadata of a namespace as cached, or undefined if the cache has none by that name. */
  private readonly controlPlaneNamespace: (name: string) => ObjectMeta | undefined;
  /** The same, read from the control plane itself: for a namespace made a moment ago, which the cache has not seen. */
  private readonly readControlPlaneNamespace: ((name: string) => Promise<ObjectMeta | undefined>) | undefined;
  private readonly cellListWatch: (cell: EngagedCell) => ListWatch;

  constructor(options: {
    registry: Registry;
    logger: Logger;
    controlPlaneNamespace: (name: string) => ObjectMeta | undefined;
    readControlPlaneNamespace?: (name: string) => Promise<ObjectMeta | undefined>;
    /** Where a cell's namespaces come from: its apiserver, metadata only, by default (tests give a fake). */
    cellListWatch?: (cell: EngagedCell) => ListWatch;
  }) {
    this.registry = options.registry;
    this.log = options.logger;
    this.controlPlaneNamespace = options.controlPlaneNamespace;
    this.readControlPlaneNamespace = options.readControlPlaneNamespace;
    this.cellListWatch =
      options.cellListWatch ?? ((cell) => resourceListWatch(cell.client, NAMESPACES, { metadataOnly: true }));
  }

  engage(cell: EngagedCell): void {
    const informer = new Informer({
      cell: cell.id,
      resource: 'v1/namespaces',
      listWatch: this.cellListWatch(cell),
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
   * the refusal instead). A namespace the control plane's cache has not seen yet (`kubectl create ns` a
   * moment ago) is read from the control plane, after `authorize`, as the router reads nothing for a caller
   * before. Never throws: if the namespace cannot be created the write goes on and the cell answers for itself
   * (404 NotFound).
   */
  async ensure(cell: string, namespace: string, authorize: Authorize): Promise<Refusal | undefined> {
    if (namespace === '') return undefined;
    const entry = this.informers.get(cell);
    if (!entry) return undefined;
    const { informer, client } = entry;
    if (informer.hasSynced() && informer.has(`${cell}//${namespace}`)) return undefined;
    const cached = this.controlPlaneNamespace(namespace);
    if (!cached && !this.readControlPlaneNamespace) return undefined;
    const refused = await authorize();
    if (refused) return refused;
    // A burst of writes into a new namespace shares one read and one create.
    const key = `${cell}/${namespace}`;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.createFrom(cell, client, namespace, cached).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    await pending;
    return undefined;
  }

  private async createFrom(
    cell: string,
    client: KubeClient,
    namespace: string,
    cached: ObjectMeta | undefined,
  ): Promise<void> {
    let source = cached;
    if (!source) {
      try {
        source = await this.readControlPlaneNamespace?.(namespace);
      } catch (error) {
        this.log.warn(
          { cell, namespace, err: errorMessage(error) },
          'could not read the namespace from the control plane',
        );
      }
    }
    // One being deleted is not made again: the write meets the cell's terminating copy, or none (the cell's
    // 404), where one apiserver refuses new content in a terminating namespace.
    if (source && !source.deletionTimestamp) await this.create(cell, client, namespace, source);
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
            // Which namespace of that name it stands for (the mirror deletes one left from an earlier).
            ...(source.uid ? { annotations: { [NAMESPACE_UID_ANNOTATION]: source.uid } } : {}),
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
