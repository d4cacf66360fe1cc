import type { WatchEvent } from '@cellfed/controller-kit';

import type { CellularResource } from '../routing/cellular-resources.ts';
import { ownObjectView } from './own-objects.ts';
import { watchedMeta, type ShownEvent, type WatchedObject } from './watched-object.ts';

/** Reads one source's copy of an object, in the watch's own form. */
export type CopyReader = (
  source: string,
  namespace: string,
  name: string,
) => Promise<WatchedObject | undefined>;

/** One name as this watch has seen it: each source's copy's creationTimestamp, and whose the client has. */
interface Name {
  readonly holders: Map<string, string>;
  shown?: string;
}

/**
 * What a watcher of a cell-made resource (routing/cell-made-resources.ts) sees of one source's event: every
 * object where it is, one name shown as one object. Two sources hold one name only for a while — the
 * ReplicaSet a moved Deployment's new cell made (or was given as its revision history), until the old cell
 * collects its own — and the client is shown the copy a list shows: the newest (copy-choice.ts `newestCopy`;
 * on a tie, the one it has). A second copy arriving is a change, never an ADDED for a name the client has; the
 * other copy's events are not shown; and when the copy the client has is deleted while another remains, the
 * client is shown the remaining one as a change (read from its source), so it never keeps a copy that is gone.
 * Of what each apiserver makes for itself, the control plane's shows (own-objects.ts).
 */
export class CellMadeTracker {
  private readonly names = new Map<string, Name>();
  private readonly resource: CellularResource;
  private readonly readCopy: CopyReader | undefined;

  constructor(resource: CellularResource, readCopy?: CopyReader) {
    this.resource = resource;
    this.readCopy = readCopy;
  }

  /** Whether a source holds `namespace/name` as far as this watch has seen. */
  holds(namespace: string, name: string): boolean {
    return this.names.has(`${namespace}/${name}`);
  }

  async decide(source: string, event: WatchEvent): Promise<ShownEvent | undefined> {
    const meta = watchedMeta(event.object as WatchedObject);
    const namespace = meta.namespace ?? '';
    const name = meta.name ?? '';
    const own = ownObjectView(this.resource, 'anywhere', source, namespace, name);
    if (own !== 'route') return own === 'show' ? event : undefined;
    const key = `${namespace}/${name}`;
    const known = this.names.get(key) ?? { holders: new Map<string, string>() };
    if (event.type === 'DELETED') {
      known.holders.delete(source);
      if (known.holders.size === 0) {
        this.names.delete(key);
        return event;
      }
      if (known.shown !== undefined && known.shown !== source) return undefined;
      // The client has the copy that went: it is shown the one a list shows now.
      const next = newest(known.holders, undefined);
      const copy = this.readCopy
        ? await this.readCopy(next, namespace, name).catch(() => undefined)
        : undefined;
      if (!copy) return undefined;
      known.shown = next;
      return { type: 'MODIFIED', object: copy, source: next };
    }
    known.holders.set(source, meta.creationTimestamp ?? '');
    this.names.set(key, known);
    if (newest(known.holders, known.shown) !== source) return undefined;
    const had = known.shown !== undefined;
    known.shown = source;
    return event.type === 'ADDED' && had ? { ...event, type: 'MODIFIED' } : event;
  }
}

/** The holder with the newest copy; `current` on a tie with it (creationTimestamps compare as strings). */
function newest(holders: ReadonlyMap<string, string>, current: string | undefined): string {
  let best: string | undefined;
  for (const [holder, created] of holders) {
    const bestCreated = best === undefined ? undefined : holders.get(best)!;
    if (bestCreated === undefined || created > bestCreated || (created === bestCreated && holder === current))
      best = holder;
  }
  return best!;
}
