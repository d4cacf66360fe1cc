import { FOLLOWER_LABEL, type GroupVersionResource, FOLLOWED_VERSION_ANNOTATION } from '@cellfed/api';
import {
  CONTROL_PLANE,
  isAlreadyExists,
  isNotFound,
  readIfExists,
  ApiError,
  type CopiesView,
  type KubeClient,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  writeDrawingQuota,
  type QuotaDraw,
} from '@cellfed/controller-kit';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import type { Logger } from 'pino';
import {
  CLAIMS,
  CONFIG_MAPS,
  resourcePath,
  SECRETS,
  type KubeList,
  type KubeObject,
  CELL_SYSTEM_NAMESPACES,
  hasPodTemplate,
  isCellOwnObject,
  objectPath,
  podReferences,
  type CellularObjectRef,
  type PodReferences,
  formatObjectKey,
  keyCodec,
  type Key,
} from '@cellfed/federation';

import type { CellEnd, CellLookup } from '../cell-end.ts';
import { AdmissionParams, type ParamCandidate } from './admission-params.ts';
import { followerCopy, sameFollower, type SourceId } from './follower-copy.ts';
import { inParallel } from '../in-parallel.ts';
import type { RebalanceMetrics } from '../rebalance-metrics.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import { mirroredResources, sameResource } from '../mirror/shared-objects.ts';

type Client = Pick<KubeClient, 'request'>;

/** A follower key: one namespace of one cell ("which cell" is part of the key). */
export const FOLLOWER_KEYS = keyCodec(['cell', 'namespace']);
export type FollowerKey = Key<'cell' | 'namespace'>;

export const formatFollowerKey = (key: FollowerKey): string => FOLLOWER_KEYS.format(key);
export const parseFollowerKey = (text: string): FollowerKey => FOLLOWER_KEYS.parse(text);

export interface FollowerReconcilerOptions {
  plans: PlanHolder;
  copies: CopiesView;
  cell: CellLookup;
  /** The router control plane, where the ConfigMaps and Secrets that are not cellular live. */
  controlPlane: Client;
  metrics: RebalanceMetrics;
  /** How often a namespace of a cell is compared again although nothing changed. Default 60 s. */
  resyncMs?: number;
  /**
   * The params the control plane's admission policy bindings name, followed into every cell; none by
   * default. Undefined while the policies and bindings are not listed yet: a pass then would take every
   * param's follower for unneeded, and waits instead.
   */
  params?: () => AdmissionParams | undefined;
  /** Draws quota share into a cell whose quota admission refuses a follower; none: refused as it comes. */
  quota?: Pick<QuotaDraw, 'drawTo'>;
  /**
   * Told the claims (PersistentVolumeClaims) a cell's pod templates in `namespace` began or stopped naming:
   * the claim controller places claims (see cellsNaming), not this one.
   */
  onClaimsNamed?: (namespace: string, claims: readonly string[]) => void;
}

/** What one workload copy's pod template names, as of its uid and generation. */
interface Template {
  readonly uid: string | undefined;
  readonly generation: number | undefined;
  readonly references: PodReferences;
}

/** One pass over one kind of one namespace of one cell. */
interface Pass {
  readonly cell: CellEnd;
  readonly kind: GroupVersionResource;
  readonly namespace: string;
  /** Whether the kind is cellular (its objects live in cells) rather than in the control plane. */
  readonly cellular: boolean;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** Where a wanted follower's source is, as far as the caches tell. */
interface Source {
  readonly from: SourceId;
  readonly client: Client;
  /** The source's resourceVersion in the cache, for a source in a cell. */
  readonly version?: string | undefined;
}

const KINDS = [CONFIG_MAPS, SECRETS] as const;

/**
 * Keeps in each cell the ConfigMaps and Secrets its workloads' pod templates name (see podReferences), and
 * those admission policy bindings name as params (see AdmissionParams), where the object itself lives
 * elsewhere: in another cell (ConfigMaps are cellular, and the ring places them apart from the workloads)
 * or in the control plane (Secrets, by default). The cell's kubelets and admission read them from their own
 * apiserver, so without a copy the pods never start and a policy finds no param. Keyed by cell and namespace:
 * each pass takes the cell's workloads there from the cache (reading only those whose spec changed), and
 * writes, updates or deletes the follower copies to match.
 * A copy of the object itself in the cell (its home, or one in the middle of a move) is never touched.
 */
export class FollowerReconciler implements Reconciler<FollowerKey> {
  private readonly options: FollowerReconcilerOptions;
  /**
   * What each key's pod templates named at its last pass (`resource/name`), kept or not: a source that
   * changes, appears or moves queues only the cells that name it.
   */
  private readonly named = new Map<string, Set<string>>();
  /**
   * What each workload copy's pod template names, per key, by the copy's object key, as of the copy's uid and
   * generation: a pass reads only the workloads whose spec changed since, never the whole namespace.
   */
  private readonly templates = new Map<string, Map<string, Template>>();

  constructor(options: FollowerReconcilerOptions) {
    this.options = options;
  }

  async reconcile({
    key: followerKey,
    signal,
    log,
  }: ReconcileRequest<FollowerKey>): Promise<ReconcileResult> {
    const { cell: cellId, namespace } = followerKey;
    // What each pass named is remembered by the key as the queue writes it.
    const key = formatFollowerKey(followerKey);
    const spec = this.options.plans.current()?.spec;
    const cell = this.options.cell(cellId);
    const entry = spec?.cells.find((candidate) => candidate.id === cellId);
    if (!spec || !cell || !entry || entry.state === 'Down' || CELL_SYSTEM_NAMESPACES.has(namespace)) {
      this.named.delete(key);
      this.templates.delete(key);
      return {};
    }
    // Without the cell's workloads (or the bindings) listed, a pass would take every follower for unneeded.
    const params = this.options.params ? this.options.params() : AdmissionParams.NONE;
    if (!this.options.copies.synced([cellId]) || !params) return { requeueAfterMs: 1000 };
    const paramKinds = new Set(params.wants.map((want) => want.resource));
    const { named: wanted, present } = await this.referenced(key, namespace, cell, paramKinds, signal);
    const shared = mirroredResources(spec);
    const named = new Set<string>();
    let writes = 0;
    for (const kind of KINDS) {
      if (shared.some((resource) => sameResource(resource, kind))) continue; // every cell has them already
      const cellular = spec.cellularResources.some((resource) => sameResource(resource, kind));
      const pass = { cell, kind, namespace, cellular, signal, log };
      const names = wanted.get(kind.resource) ?? new Set<string>();
      const candidates = present.get(kind.resource) ?? [];
      for (const name of params.namesIn(kind.resource, namespace, candidates, cellular)) names.add(name);
      writes += await this.follow(pass, names);
      for (const name of names) named.add(`${kind.resource}/${name}`);
    }
    const claims = [...(wanted.get(CLAIMS.resource) ?? [])].map((name) => `${CLAIMS.resource}/${name}`);
    for (const claim of claims) named.add(claim);
    this.tellClaims(namespace, this.named.get(key), named);
    if (named.size > 0) this.named.set(key, named);
    else this.named.delete(key);
    if (writes > 0) log.info({ cell: cellId, namespace, writes }, 'follower copies written');
    return { requeueAfterMs: this.options.resyncMs ?? 60_000 };
  }

  /**
   * The cells whose pod templates named this ConfigMap, Secret or claim at their last pass: its change,
   * creation or move concerns only them (every key is compared again on its resync anyway).
   */
  cellsNaming(ref: CellularObjectRef): string[] {
    const cells: string[] = [];
    for (const [key, names] of this.named) {
      if (!names.has(`${ref.resource.resource}/${ref.name}`)) continue;
      const { cell, namespace } = parseFollowerKey(key);
      if (namespace === ref.namespace) cells.push(cell);
    }
    return cells;
  }

  private tellClaims(namespace: string, before: ReadonlySet<string> | undefined, now: ReadonlySet<string>) {
    const prefix = `${CLAIMS.resource}/`;
    const changed = [...new Set([...(before ?? []), ...now])].filter(
      (name) => name.startsWith(prefix) && before?.has(name) !== now.has(name),
    );
    if (changed.length > 0)
      this.options.onClaimsNamed?.(
        namespace,
        changed.map((name) => name.slice(prefix.length)),
      );
  }

  /**
   * The names each kind's pod templates in the key's namespace name (and the claims they mount), from the
   * cell's cached workload copies (a copy whose uid and generation are as last read is not read again); and
   * the ConfigMaps and Secrets every cell holds there of the `paramKinds` bindings take params of, which
   * admission params are chosen from.
   */
  private async referenced(
    key: string,
    namespace: string,
    cell: CellEnd,
    paramKinds: ReadonlySet<string>,
    signal: AbortSignal,
  ): Promise<{ named: Map<string, Set<string>>; present: Map<string, ParamCandidate[]> }> {
    const known = this.templates.get(key) ?? new Map<string, Template>();
    const current = new Map<string, Template>();
    const toRead: CellularObjectRef[] = [];
    /** A move's fenced or old copies: their pods are going, and a claim is not placed for them. */
    const leaving = new Set<string>();
    const present = new Map<string, ParamCandidate[]>(KINDS.map((kind) => [kind.resource, []]));
    this.options.copies.eachCopy((copyCell, ref, metadata) => {
      if (ref.namespace !== namespace) return;
      if (ref.resource.group === '' && paramKinds.has(ref.resource.resource))
        present.get(ref.resource.resource)?.push({ name: ref.name, labels: metadata.labels });
      if (copyCell !== cell.id || !hasPodTemplate(ref.resource)) return;
      const status = metadata.labels?.[REBALANCE_STATUS_LABEL];
      if (status === MIGRATING || status === MIGRATED) leaving.add(formatObjectKey(ref));
      const template = known.get(formatObjectKey(ref));
      if (template && template.uid === metadata.uid && template.generation === metadata.generation)
        current.set(formatObjectKey(ref), template);
      else toRead.push(ref);
    });
    await inParallel(
      toRead.map((ref) => async () => {
        const object = await read(cell.client, ref, signal);
        if (!object) return; // gone since the cache saw it
        const { uid, generation } = object.metadata;
        current.set(formatObjectKey(ref), { uid, generation, references: podReferences(object) });
      }),
      4,
    );
    if (current.size > 0) this.templates.set(key, current);
    else this.templates.delete(key);
    const wanted = new Map<string, Set<string>>(
      [...KINDS, CLAIMS].map((kind) => [kind.resource, new Set<string>()]),
    );
    for (const [copy, { references }] of current) {
      for (const name of references.configMaps) wanted.get(CONFIG_MAPS.resource)!.add(name);
      for (const name of references.secrets) wanted.get(SECRETS.resource)!.add(name);
      if (!leaving.has(copy)) for (const name of references.claims) wanted.get(CLAIMS.resource)!.add(name);
    }
    return { named: wanted, present };
  }

  /**
   * Makes the cell's followers of one kind in one namespace match `names`: answers how many writes that
   * took.
   */
  private async follow(pass: Pass, names: ReadonlySet<string>): Promise<number> {
    const { cell, kind, namespace, cellular, signal } = pass;
    const collection = resourcePath({ ...kind, namespaced: true }, namespace);
    let existing: KubeList;
    try {
      existing = await cell.client.request<KubeList>('GET', collection, {
        query: { labelSelector: FOLLOWER_LABEL },
        signal,
      });
    } catch (error) {
      if (isNotFound(error)) return 0; // the namespace is not in the cell (yet, or any more)
      throw error;
    }
    const followers = new Map((existing.items ?? []).map((item) => [item.metadata.name ?? '', item]));
    const tasks: (() => Promise<boolean>)[] = [];
    const kept = new Set<string>();
    for (const name of names) {
      const ref: CellularObjectRef = { resource: kind, namespace, name };
      if (isCellOwnObject(ref)) continue; // every cell has its own kube-root-ca.crt
      const source = this.sourceOf(ref, cell.id, cellular);
      if (!source) continue; // here already, or nowhere
      kept.add(name);
      const current = followers.get(name);
      if (current && fresh(current, source)) continue;
      tasks.push(async () => {
        const object = await read(source.client, ref, signal);
        if (!object) {
          kept.delete(name); // the source is gone: so goes the follower
          return current !== undefined && this.remove(cell.client, ref, current, signal);
        }
        const copy = followerCopy(
          { ...object, kind: kind === SECRETS ? 'Secret' : 'ConfigMap' },
          source.from,
        );
        if (current && sameFollower(current, copy)) return false;
        return this.write(pass, ref, copy, current);
      });
    }
    for (const [name, current] of followers)
      if (!kept.has(name))
        tasks.push(() => this.remove(cell.client, { resource: kind, namespace, name }, current, signal));
    let writes = 0;
    await inParallel(
      tasks.map((task) => async () => {
        if (await task()) writes++;
      }),
      4,
    );
    return writes;
  }

  /**
   * Where the object a pod template names lives, if not in `cellId` already: for a cellular kind the cell
   * whose copy is the object (not the leftover of a move), for another kind the control plane.
   */
  private sourceOf(ref: CellularObjectRef, cellId: string, cellular: boolean): Source | undefined {
    if (!cellular) return { from: CONTROL_PLANE, client: this.options.controlPlane };
    const copies = this.options.copies.copiesOf(ref);
    if (copies.has(cellId)) return undefined;
    let chosen: Source | undefined;
    for (const [id, metadata] of copies) {
      const client = this.options.cell(id)?.client;
      if (!client) continue;
      const source = { from: id, client, version: metadata.resourceVersion };
      if (metadata.labels?.[REBALANCE_STATUS_LABEL] !== MIGRATED) return source;
      chosen ??= source;
    }
    return chosen;
  }

  /** Creates or updates the follower; answers whether it wrote (false: an object that is not one is there). */
  private async write(pass: Pass, ref: CellularObjectRef, copy: KubeObject, current: KubeObject | undefined) {
    const { cell, signal, log } = pass;
    const collection = resourcePath({ ...ref.resource, namespaced: true }, ref.namespace);
    const create = async () => {
      try {
        // A follower is not the federation's and its cell's quota share makes room for it once it is there
        // (the quota reconciler counts it apart); until then a full share draws from the other cells.
        await writeDrawingQuota(this.options.quota, cell.id, ref.namespace, () =>
          cell.client.request('POST', collection, { body: copy, signal }),
        );
        this.options.metrics.followers.inc({ action: 'created' });
        return true;
      } catch (error) {
        // The cell has an object of that name that is not a follower: the object itself, arrived meanwhile
        // (a move or a promotion), or one of the cell's own. It is not the follower's to change.
        if (!isAlreadyExists(error)) throw error;
        log.debug(
          { object: `${ref.namespace}/${ref.name}` },
          'an object of that name is in the cell already',
        );
        return false;
      }
    };
    if (!current) return create();
    try {
      await cell.client.request('PUT', `${collection}/${ref.name}`, {
        body: { ...copy, metadata: { ...copy.metadata, resourceVersion: current.metadata.resourceVersion } },
        signal,
      });
      this.options.metrics.followers.inc({ action: 'updated' });
      return true;
    } catch (error) {
      // An immutable ConfigMap or Secret (or a changed Secret type) is replaced, as its users replace it.
      if (!(error instanceof ApiError) || error.statusCode !== 422) throw error;
      await this.remove(cell.client, ref, current, signal);
      return create();
    }
  }

  /** Deletes the follower if it is still the one read; answers whether it did. */
  private async remove(cell: Client, ref: CellularObjectRef, current: KubeObject, signal: AbortSignal) {
    const path = `${resourcePath({ ...ref.resource, namespaced: true }, ref.namespace)}/${ref.name}`;
    try {
      await cell.request('DELETE', path, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: current.metadata.uid } },
        signal,
      });
      this.options.metrics.followers.inc({ action: 'deleted' });
      return true;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return false;
    }
  }
}

/** Whether a follower is known current without reading its source: a cell source at the cached version. */
function fresh(current: KubeObject, source: Source): boolean {
  return (
    source.version !== undefined &&
    current.metadata.labels?.[FOLLOWER_LABEL] === source.from &&
    current.metadata.annotations?.[FOLLOWED_VERSION_ANNOTATION] === source.version
  );
}

function read(client: Client, ref: CellularObjectRef, signal: AbortSignal): Promise<KubeObject | undefined> {
  return readIfExists(client, objectPath(ref), { signal });
}
