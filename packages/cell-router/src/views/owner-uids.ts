import { ORIGIN_UID_ANNOTATION } from '@cellfed/api';
import { resourcePath, type KubeObject } from '@cellfed/federation';

import type { CellularKinds } from './cellular-kinds.ts';

/** An owner reference as a cell stores it: only the fields the translation reads. */
interface OwnerRef {
  apiVersion?: unknown;
  kind?: unknown;
  name?: unknown;
  uid?: unknown;
}

interface WithOwners {
  metadata?: { namespace?: string; ownerReferences?: unknown };
  /** A core Event's object (`kubectl describe` finds the events of an object by its uid). */
  involvedObject?: unknown;
  /** An events.k8s.io Event's object. */
  regarding?: unknown;
}

/** Reads one object in a cell with the router's own identity; undefined when it is not there. */
export type ReadInCell = (cell: string, path: string) => Promise<KubeObject | undefined>;

/** How many uid pairs are remembered (oldest forgotten first): about 200 bytes each. */
const REMEMBERED = 50_000;
/** How long a reference that named no object to translate is not read again. */
const MISSED_FOR_MS = 30_000;
/**
 * Reads as the router one answer (a list, a watch event) or one write may cost at most: references are a
 * caller's text, so a list of Events naming made-up objects costs a bounded number of reads, not one each.
 */
const MAX_READS_PER_ANSWER = 32;

/**
 * The uids in owner references a cell's own controllers set. A ReplicaSet names its Deployment by the uid
 * the Deployment has in that cell; a Deployment that moved (or was restored from its backup) has a new uid
 * there, and clients know it by its first one (`cellfed.io/uid`). kubectl matches ReplicaSets to their
 * Deployment by uid (describe, rollout history, rollout undo), so on the way out each such reference shows the
 * uid clients know, and on the way in (an update of the ReplicaSet) it gets back the cell's, or the cell's
 * garbage collector would take the owner for gone.
 *
 * An Event names its object by uid too (`involvedObject`, `regarding`), and `kubectl describe` lists the
 * events of the uid it was shown: translated the same way.
 *
 * The owner is read by name in the same cell, once: a uid names one object forever, so the pair is kept.
 * Owners of kinds that are not cellular (a Pod's ReplicaSet) never move and are left as they are.
 */
export class OwnerUids {
  /** `cell uid` → the uid clients know, per cell. */
  private readonly shown = new Map<string, string>();
  /** `client uid` → the cell's uid, per cell. */
  private readonly stored = new Map<string, string>();
  /** References read lately that named nothing to translate (`cell path uid` → until when). */
  private readonly missed = new Map<string, number>();
  private readonly kinds: CellularKinds;
  private readonly read: ReadInCell;
  private readonly now: () => number;

  constructor(kinds: CellularKinds, read: ReadInCell, now: () => number = Date.now) {
    this.kinds = kinds;
    this.read = read;
    this.now = now;
  }

  /**
   * Shows, in place, the uids clients know in the owner references of `value`: an object, a List's items, a
   * Table's rows' objects. Whether anything changed.
   */
  async show(cell: string, value: unknown): Promise<boolean> {
    return this.rewrite(value, '', (namespace, ref, reads) => this.clientUid(cell, namespace, ref, reads));
  }

  /** The reverse of {@link show} for an object written into `cell`, in place. Whether anything changed. */
  async store(cell: string, namespace: string, value: unknown): Promise<boolean> {
    return this.rewrite(value, namespace, (objectNamespace, ref, reads) =>
      this.cellUid(cell, objectNamespace, ref, reads),
    );
  }

  /** Sets each owner reference's uid to what `translate` gives for it (undefined: left as it is). */
  private async rewrite(
    value: unknown,
    namespace: string,
    translate: (namespace: string, ref: OwnerRef, reads: { left: number }) => Promise<string | undefined>,
  ): Promise<boolean> {
    let changed = false;
    const reads = { left: MAX_READS_PER_ANSWER };
    for (const object of objectsIn(value))
      // References are a caller's text (written, or stored by an earlier write): each may cost a read as the
      // router, so only so many, in written objects and answers alike.
      for (const { ref, refNamespace } of refsOf(object).slice(0, MAX_OWNER_REFERENCES)) {
        const uid = await translate(refNamespace ?? object.metadata?.namespace ?? namespace, ref, reads);
        if (uid !== undefined && uid !== ref.uid) {
          ref.uid = uid;
          changed = true;
        }
      }
    return changed;
  }

  private async clientUid(
    cell: string,
    namespace: string,
    ref: OwnerRef,
    reads: { left: number },
  ): Promise<string | undefined> {
    const known = this.shown.get(`${cell} ${String(ref.uid)}`);
    if (known !== undefined) return known;
    const owner = await this.owner(cell, namespace, ref, reads);
    // A different uid: the owner was deleted (and made again); the reference is shown as the cell has it.
    return owner && owner.cellUid === ref.uid ? owner.clientUid : undefined;
  }

  private async cellUid(
    cell: string,
    namespace: string,
    ref: OwnerRef,
    reads: { left: number },
  ): Promise<string | undefined> {
    const known = this.stored.get(`${cell} ${String(ref.uid)}`);
    if (known !== undefined) return known;
    const owner = await this.owner(cell, namespace, ref, reads);
    return owner && owner.clientUid === ref.uid ? owner.cellUid : undefined;
  }

  /** The owner a reference names, read by name in `cell`: its uid there and the one clients know. */
  private async owner(cell: string, namespace: string, ref: OwnerRef, reads: { left: number }) {
    if (typeof ref.apiVersion !== 'string' || typeof ref.kind !== 'string' || typeof ref.name !== 'string')
      return undefined;
    const resource = await this.kinds.resourceOf(ref.apiVersion, ref.kind);
    if (!resource) return undefined;
    const path = resourcePath(resource, namespace, ref.name);
    const missKey = `${cell} ${path} ${String(ref.uid)}`;
    const missedUntil = this.missed.get(missKey);
    if (missedUntil !== undefined && missedUntil > this.now()) return undefined;
    if (reads.left <= 0) return undefined;
    reads.left--;
    let object: KubeObject | undefined;
    try {
      object = await this.read(cell, path);
    } catch {
      return undefined; // shown as stored; the next answer asks again
    }
    const cellUid = object?.metadata.uid;
    if (
      !object ||
      !cellUid ||
      (cellUid !== ref.uid && object.metadata.annotations?.[ORIGIN_UID_ANNOTATION] !== ref.uid)
    ) {
      this.missed.delete(missKey);
      this.missed.set(missKey, this.now() + MISSED_FOR_MS);
      if (this.missed.size > REMEMBERED) this.missed.delete(this.missed.keys().next().value!);
    }
    if (!object || !cellUid) return undefined;
    const clientUid = object.metadata.annotations?.[ORIGIN_UID_ANNOTATION] ?? cellUid;
    remember(this.shown, `${cell} ${cellUid}`, clientUid);
    remember(this.stored, `${cell} ${clientUid}`, cellUid);
    return { cellUid, clientUid };
  }
}

/** Owner references of one object that are translated, either way; Kubernetes objects have one or two. */
const MAX_OWNER_REFERENCES = 16;

function remember(map: Map<string, string>, key: string, value: string): void {
  map.set(key, value);
  if (map.size > REMEMBERED) map.delete(map.keys().next().value!);
}

/** The objects of a value: itself, a List's items, a Table's rows' objects (a merged Table row: its object). */
function objectsIn(value: unknown): WithOwners[] {
  if (typeof value !== 'object' || value === null) return [];
  const object = value as WithOwners & {
    kind?: string;
    items?: unknown;
    rows?: unknown;
    cells?: unknown;
    object?: unknown;
  };
  const found: WithOwners[] = [object];
  if (Array.isArray(object.items)) for (const item of object.items) found.push(...objectsIn(item));
  if (Array.isArray(object.rows))
    for (const row of object.rows as { object?: unknown }[]) found.push(...objectsIn(row.object));
  if (Array.isArray(object.cells)) found.push(...objectsIn(object.object));
  return found;
}

/** The references of an object with a uid: its owners (in its namespace), an Event's object (in its own). */
function refsOf(object: WithOwners): { ref: OwnerRef; refNamespace?: string }[] {
  const isRef = (ref: unknown): ref is OwnerRef & { namespace?: unknown } =>
    typeof ref === 'object' && ref !== null && typeof (ref as OwnerRef).uid === 'string';
  const owners = object.metadata?.ownerReferences;
  const found: { ref: OwnerRef; refNamespace?: string }[] = Array.isArray(owners)
    ? owners.filter(isRef).map((ref) => ({ ref }))
    : [];
  // An Event's object in its own namespace only: its text is the writer's, and a reference into another
  // namespace would have the router read there, as itself, for a caller who may list Events here.
  const own = object.metadata?.namespace;
  for (const ref of [object.involvedObject, object.regarding])
    if (isRef(ref) && typeof ref.namespace === 'string' && ref.namespace === own)
      found.push({ ref, refNamespace: ref.namespace });
  return found;
}

const MARKS = ['"ownerReferences"', '"involvedObject"', '"regarding"'];

/**
 * A JSON text with {@link OwnerUids.show} applied: the same text when it names no owners or none changed
 * (most do not), else re-encoded.
 */
export async function showOwnerUids<T extends Buffer | string>(
  uids: OwnerUids,
  cell: string,
  json: T,
): Promise<T | string> {
  if (!MARKS.some((mark) => json.includes(mark))) return json;
  let value: unknown;
  try {
    value = JSON.parse(json.toString());
  } catch {
    return json;
  }
  return (await uids.show(cell, value)) ? JSON.stringify(value) : json;
}
