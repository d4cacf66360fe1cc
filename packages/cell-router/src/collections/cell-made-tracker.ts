import type { WatchEvent } from '@cellfed/controller-kit';

import type { CellularResource } from '../routing/cellular-resources.ts';
import { ownObjectView } from './own-objects.ts';
import { watchedMeta, type WatchedObject } from './watched-object.ts';

/**
 * What a watcher of a cell-made resource (routing/cell-made-resources.ts) sees of one source's event: every
 * object where it is, one name shown as one object. Two sources hold one name only for a while — the
 * ReplicaSet a moved Deployment's new cell made, until the old cell collects its own — so the client is told
 * of the second copy as a change (never an ADDED for a name it has) and of the first copy's deletion not at
 * all (the name still exists). Of what each apiserver makes for itself, the control plane's shows (own-objects.ts).
 */
export class CellMadeTracker {
  /** The sources that hold each name, as far as this watch has seen. */
  private readonly holders = new Map<string, string[]>();
  private readonly resource: CellularResource;

  constructor(resource: CellularResource) {
    this.resource = resource;
  }

  /** Whether a source holds `namespace/name` as far as this watch has seen. */
  holds(namespace: string, name: string): boolean {
    return this.holders.has(`${namespace}/${name}`);
  }

  decide(source: string, event: WatchEvent): WatchEvent | undefined {
    const meta = watchedMeta(event.object as WatchedObject);
    const namespace = meta.namespace ?? '';
    const name = meta.name ?? '';
    const own = ownObjectView(this.resource, 'anywhere', source, namespace, name);
    if (own !== 'route') return own === 'show' ? event : undefined;
    const key = `${namespace}/${name}`;
    const holders = this.holders.get(key) ?? [];
    const others = holders.filter((holder) => holder !== source);
    if (event.type === 'DELETED') {
      if (others.length > 0) {
        this.holders.set(key, others);
        return undefined;
      }
      this.holders.delete(key);
      return event;
    }
    if (!holders.includes(source)) this.holders.set(key, [...holders, source]);
    return event.type === 'ADDED' && others.length > 0 ? { ...event, type: 'MODIFIED' } : event;
  }
}
