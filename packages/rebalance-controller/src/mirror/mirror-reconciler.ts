import { type GroupVersionResource, MIRRORED_LABEL, NAMESPACE_UID_ANNOTATION } from '@cellfed/api';
import {
  errorMessage,
  isNotFound,
  readIfExists,
  type EngagedCell,
  type KubeClient,
  type CellKey,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '@cellfed/controller-kit';
import {
  APPLY_PATCH,
  METADATA_LIST,
  type KubeList,
  type KubeObject,
  CELL_SYSTEM_NAMESPACES,
} from '@cellfed/federation';

import type { MirrorState } from './mirror-state.ts';
import { applyIfChanged } from './apply-if-changed.ts';
import { ensureCellFence, ownUserName } from './cell-fence.ts';
import { inParallel } from '../in-parallel.ts';
import { MIRROR_FIELD_MANAGER as FIELD_MANAGER, MIRRORED_VALUE } from '../mirror-marks.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { mirrorSharedObjects, mirroredResources } from './shared-objects.ts';

/** Every apiserver has these of its own: never mirrored. */
export const CELL_OWN_NAMESPACES = new Set(['default', ...CELL_SYSTEM_NAMESPACES]);

/** The user names the router and the backup controller call the cells as, where they are not the controller's. */
export interface OtherCellUsers {
  readonly router?: string | undefined;
  readonly backupController?: string | undefined;
}

export interface MirrorReconcilerOptions {
  plans: PlanHolder;
  /** The router control plane, for the objects of the CellSet's shared resources. */
  controlPlane: Pick<KubeClient, 'request'>;
  cell: (id: string) => EngagedCell | undefined;
  /** The control plane's namespaces (metadata), from its cache. */
  namespaces: () => readonly KubeObject[];
  /** A CustomResourceDefinition of the control plane by name, from its cache. */
  crd: (name: string) => KubeObject | undefined;
  state: MirrorState;
  /** Called after each complete pass over a cell. */
  onMirrored: (cell: string) => void;
  /**
   * The user names cellfed's other components call the cells as, where they have identities of their own
   * there: the marks policy and mirrored admission objects exempt both with the controller's own, the fence
   * the backup controller's (it promotes and purges). None: they share the controller's identity.
   */
  cellUsers?: OtherCellUsers;
  /** How often a cell is compared again although nothing changed. Default 60 s. */
  resyncMs?: number;
  /** Writes at once per cell. Default 8. */
  parallelism?: number;
}

/**
 * Keeps each cell's shared objects as the router control plane has them (keyed by cell id): every
 * namespace with its labels, the CRDs of cellular and shared resources, every object of the CellSet's
 * `sharedResources` and every ServiceAccount (see {@link mirroredResources}), and the write fence policy (see {@link ensureCellFence}). What the mirror made is
 * deleted from the cell when the control plane's is deleted; nothing else in a cell is touched. Each pass compares the cell as it is now with the control plane, so a
 * cell that missed changes catches up; namespace and CRD changes start a pass at once, other shared objects
 * are compared every `resyncMs`.
 */
export class MirrorReconciler implements Reconciler<CellKey> {
  private readonly options: MirrorReconcilerOptions;

  constructor(options: MirrorReconcilerOptions) {
    this.options = options;
  }

  async reconcile({
    key: { cell: cellId },
    signal,
    log,
  }: ReconcileRequest<CellKey>): Promise<ReconcileResult> {
    const { plans, state } = this.options;
    const cell = this.options.cell(cellId);
    const spec = plans.current()?.spec;
    const entry = spec?.cells.find((candidate) => candidate.id === cellId);
    if (!cell || !spec || !entry || entry.state === 'Down') {
      state.set(cellId, false);
      return {};
    }
    let namespaceWrites: number, crdWrites: number, sharedWrites: number, fenceWrites: number;
    try {
      // Who cellfed is in this cell: the write fence, the marks policy and the mirrored admission objects
      // exempt the controller (as the cell knows it) and the other components.
      const own = await ownUserName(cell.client, signal);
      const { router, backupController } = this.options.cellUsers ?? {};
      const controllers = [own, backupController].filter((user) => user !== undefined);
      const users = [...controllers, router].filter((user) => user !== undefined);
      namespaceWrites = await this.mirrorNamespaces(cell, signal);
      // A shared custom resource needs its CRD in the cells as much as a cellular one does.
      crdWrites = await this.mirrorCrds(cell, [...spec.cellularResources, ...spec.sharedResources], signal);
      sharedWrites = await mirrorSharedObjects(
        this.options.controlPlane,
        cell.client,
        mirroredResources(spec),
        signal,
        this.options.parallelism ?? 8,
        users,
      );
      fenceWrites = await ensureCellFence(cell.client, { controllers, components: users }, signal);
    } catch (error) {
      state.failed(cellId, errorMessage(error));
      throw error;
    }
    if (namespaceWrites + crdWrites + sharedWrites + fenceWrites > 0)
      log.info(
        { cell: cellId, namespaceWrites, crdWrites, sharedWrites, fenceWrites },
        'shared objects mirrored into the cell',
      );
    const first = !state.isMirrored(cellId);
    state.set(cellId, true);
    if (first) this.options.onMirrored(cellId);
    return { requeueAfterMs: this.options.resyncMs ?? 60_000 };
  }

  private async mirrorNamespaces(cell: EngagedCell, signal: AbortSignal): Promise<number> {
    const inCell = await cell.client.request<KubeList>('GET', '/api/v1/namespaces', {
      accept: METADATA_LIST,
      signal,
    });
    const have = new Map(inCell.items.map((item) => [item.metadata.name ?? '', item.metadata]));
    const wanted = new Map(
      this.options
        .namespaces()
        .filter((ns) => !CELL_OWN_NAMESPACES.has(ns.metadata.name ?? '') && !ns.metadata.deletionTimestamp)
        .map((ns) => [
          ns.metadata.name ?? '',
          {
            labels: { ...ns.metadata.labels, [MIRRORED_LABEL]: MIRRORED_VALUE },
            uid: ns.metadata.uid ?? '',
          },
        ]),
    );
    const writes: (() => Promise<unknown>)[] = [];
    const stale: { name: string; stamp: string }[] = [];
    for (const [name, { labels, uid }] of wanted) {
      const current = have.get(name);
      if (current?.deletionTimestamp) continue;
      const stamp = current?.annotations?.[NAMESPACE_UID_ANNOTATION];
      // The copy of an earlier namespace of this name (deleted while this cell was out of reach): it goes,
      // with what it holds, before the new one is made.
      if (
        current &&
        stamp !== undefined &&
        stamp !== uid &&
        current.labels?.[MIRRORED_LABEL] === MIRRORED_VALUE
      ) {
        stale.push({ name, stamp });
        continue;
      }
      if (
        current &&
        stamp === uid &&
        Object.entries(labels).every(([label, value]) => current.labels?.[label] === value)
      )
        continue;
      writes.push(() =>
        cell.client.request('PATCH', `/api/v1/namespaces/${name}`, {
          body: JSON.stringify({
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name, labels, annotations: { [NAMESPACE_UID_ANNOTATION]: uid } },
          }),
          contentType: APPLY_PATCH,
          query: { fieldManager: FIELD_MANAGER, force: true },
          signal,
        }),
      );
    }
    for (const [name, metadata] of have) {
      if (wanted.has(name) || metadata.deletionTimestamp) continue;
      if (metadata.labels?.[MIRRORED_LABEL] !== MIRRORED_VALUE) continue;
      writes.push(async () => {
        // The cache may not have a namespace made a moment ago, which the router may already have made in
        // the cell for a write into it: only the control plane's own answer says it is gone.
        if (await this.inControlPlane(name, signal)) return;
        await this.deleteInCell(cell, name, signal);
      });
    }
    for (const { name, stamp } of stale)
      writes.push(async () => {
        // Only the control plane's own answer says which namespace of that name is current (the cache may
        // still have the earlier one).
        const current = await readIfExists<KubeObject>(
          this.options.controlPlane,
          `/api/v1/namespaces/${name}`,
          {
            signal,
          },
        );
        if (current?.metadata.uid !== stamp) await this.deleteInCell(cell, name, signal);
      });
    await inParallel(writes, this.options.parallelism ?? 8);
    return writes.length;
  }

  private async deleteInCell(cell: EngagedCell, name: string, signal: AbortSignal): Promise<void> {
    await cell.client.request('DELETE', `/api/v1/namespaces/${name}`, { signal }).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }

  /** Whether the control plane has namespace `name` (and is not deleting it), asked, not cached. */
  private async inControlPlane(name: string, signal: AbortSignal): Promise<boolean> {
    const namespace = await readIfExists<KubeObject>(
      this.options.controlPlane,
      `/api/v1/namespaces/${name}`,
      {
        signal,
      },
    );
    return namespace !== undefined && !namespace.metadata.deletionTimestamp;
  }

  private async mirrorCrds(
    cell: EngagedCell,
    resources: readonly GroupVersionResource[],
    signal: AbortSignal,
  ): Promise<number> {
    let writes = 0;
    for (const { group, resource } of resources) {
      if (!group) continue;
      const name = `${resource}.${group}`;
      const source = this.options.crd(name);
      if (!source) continue;
      const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name, labels: { ...source.metadata.labels, [MIRRORED_LABEL]: MIRRORED_VALUE } },
        spec: source.spec,
      };
      if (!(await applyIfChanged(cell.client, path, crd, source.spec, signal))) continue;
      writes++;
    }
    return writes;
  }
}
