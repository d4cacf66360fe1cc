import { CELLS_FINALIZER, MIRRORED_LABEL } from '@cellfed/api';
import {
  isNotFound,
  readIfExists,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import { JSON_PATCH, keyCodec, type Key, type KubeObject, type ObjectMeta } from '@cellfed/federation';

import type { CellLookup } from '../cell-end.ts';
import { CELL_OWN_NAMESPACES } from '../mirror/mirror-reconciler.ts';
import { MIRRORED_VALUE } from '../mirror-marks.ts';
import type { PlanHolder } from '../rebalance-plan.ts';

export const NAMESPACE_KEYS = keyCodec(['name']);
export type NamespaceKey = Key<'name'>;

/** How often a namespace being deleted looks at the cells again while one still has its copy. */
const CELLS_POLL_MS = 2_000;

export interface NamespaceDeletionReconcilerOptions {
  plans: PlanHolder;
  controlPlane: Pick<KubeClient, 'request'>;
  /** The control plane's namespace by name (metadata), from its cache. */
  namespace: (name: string) => ObjectMeta | undefined;
  cell: CellLookup;
}

/**
 * A control-plane namespace's deletion waits for the cells (keyed by namespace name), as one apiserver's
 * namespace is gone only once its contents are: every namespace carries {@link CELLS_FINALIZER}, and while
 * one is being deleted its copy is deleted in every cell that is not Down (each cell's namespace controller
 * then deletes what it holds); the finalizer comes off once no such cell has the copy any more. So a
 * namespace made again under the same name never shows the objects of the one deleted, to anyone. A cell
 * that cannot be reached holds the deletion until it can, or until the CellSet marks it Down (its copy is
 * then deleted by the mirror when it is back, the old namespace told from the new by its uid).
 */
export class NamespaceDeletionReconciler implements Reconciler<NamespaceKey> {
  private readonly options: NamespaceDeletionReconcilerOptions;

  constructor(options: NamespaceDeletionReconcilerOptions) {
    this.options = options;
  }

  async reconcile({ key: { name }, signal, log }: ReconcileRequest<NamespaceKey>): Promise<ReconcileResult> {
    const namespace = this.options.namespace(name);
    // Every apiserver's own namespaces are never mirrored: nothing in the cells to wait for.
    if (!namespace || CELL_OWN_NAMESPACES.has(name)) return {};
    const finalizers = namespace.finalizers ?? [];
    if (!namespace.deletionTimestamp) {
      if (!finalizers.includes(CELLS_FINALIZER))
        await this.patchFinalizers(namespace, [...finalizers, CELLS_FINALIZER], signal);
      return {};
    }
    if (!finalizers.includes(CELLS_FINALIZER)) return {};
    const plan = this.options.plans.current();
    if (!plan) return { requeueAfterMs: CELLS_POLL_MS };
    const waiting: string[] = [];
    for (const id of plan.liveCells) {
      const cell = this.options.cell(id);
      if (!cell) {
        waiting.push(`${id} (not connected)`);
        continue;
      }
      const path = `/api/v1/namespaces/${name}`;
      const copy = await readIfExists<KubeObject>(cell.client, path, { signal });
      // A namespace the cell had of its own, not cellfed's copy: not cellfed's to delete or to wait for.
      if (!copy || copy.metadata.labels?.[MIRRORED_LABEL] !== MIRRORED_VALUE) continue;
      if (!copy.metadata.deletionTimestamp)
        await cell.client.request('DELETE', path, { signal }).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
      waiting.push(id);
    }
    if (waiting.length > 0) {
      log.info({ namespace: name, cells: waiting }, 'namespace deletion waits for its copies in the cells');
      return { requeueAfterMs: CELLS_POLL_MS };
    }
    await this.patchFinalizers(
      namespace,
      finalizers.filter((finalizer) => finalizer !== CELLS_FINALIZER),
      signal,
    );
    log.info({ namespace: name }, 'no cell has the namespace any more: its deletion may end');
    return {};
  }

  /**
   * Sets the namespace's finalizers, on the version read (a JSON patch that tests them first): a finalizer
   * another controller added or removed meanwhile is never lost; the key is tried again with the news.
   */
  private async patchFinalizers(namespace: ObjectMeta, finalizers: string[], signal: AbortSignal) {
    // With none read, only the version read tells that none were added since.
    const test =
      namespace.finalizers === undefined
        ? { op: 'test', path: '/metadata/resourceVersion', value: namespace.resourceVersion }
        : { op: 'test', path: '/metadata/finalizers', value: namespace.finalizers };
    await this.options.controlPlane.request('PATCH', `/api/v1/namespaces/${namespace.name}`, {
      body: [
        { op: 'test', path: '/metadata/uid', value: namespace.uid },
        test,
        { op: 'add', path: '/metadata/finalizers', value: finalizers },
      ],
      contentType: JSON_PATCH,
      signal,
    });
  }
}
