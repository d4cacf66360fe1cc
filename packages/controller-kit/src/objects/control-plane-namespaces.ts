import { NAMESPACES, type KubeObject, type ObjectMeta } from '@cellfed/federation';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

import type { Clock } from '../clock.ts';
import { Informer, type InformerEventType } from '../informer/informer.ts';
import { resourceListWatch, type ListWatch } from '../informer/list-watch.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { CONTROL_PLANE, controlPlaneNamespaceKey, parseKey } from '../object-key.ts';
import type { Lane } from '../queue/lane.ts';

export interface ControlPlaneNamespacesOptions {
  controlPlane: KubeClient;
  logger: Logger;
  registry?: Registry;
  clock?: Clock;
  /** Where the namespaces come from; the control plane's, metadata only, by default (tests give a fake). */
  listWatch?: ListWatch;
}

/** A change to one control-plane namespace, by name. */
export interface NamespaceChange {
  readonly type: InformerEventType;
  readonly name: string;
  readonly lane: Lane;
}

/**
 * The control plane's namespaces as the router and both controllers read them: their metadata (the
 * `cellfed.io/shard-by` label decides how a namespace's objects are keyed), cached by one metadata-only
 * informer, looked up by name. A name no namespace can have is a miss, never an error.
 */
export class ControlPlaneNamespaces {
  private readonly informer: Informer;

  constructor(options: ControlPlaneNamespacesOptions) {
    this.informer = new Informer({
      cell: CONTROL_PLANE,
      resource: 'v1/namespaces',
      listWatch:
        options.listWatch ?? resourceListWatch(options.controlPlane, NAMESPACES, { metadataOnly: true }),
      logger: options.logger,
      ...(options.registry ? { registry: options.registry } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
  }

  /** A copy of the namespace's labels (cheap: per request and per listed item). */
  labels(name: string): Record<string, string> | undefined {
    const key = controlPlaneNamespaceKey(name);
    return key === undefined ? undefined : this.informer.labels(key);
  }

  /** A copy of the namespace's metadata. */
  metadata(name: string): ObjectMeta | undefined {
    const key = controlPlaneNamespaceKey(name);
    return key === undefined ? undefined : this.informer.get(key)?.metadata;
  }

  /** Copies of every namespace. */
  list(): KubeObject[] {
    return this.informer.list();
  }

  /** Calls `handler` with every change, by namespace name (what the first list finds, in the low lane). */
  onChange(handler: (change: NamespaceChange) => void): void {
    this.informer.addHandler((event) =>
      handler({ type: event.type, name: parseKey(event.key).name, lane: event.lane }),
    );
  }

  run(signal: AbortSignal): Promise<void> {
    return this.informer.run(signal);
  }

  hasSynced(): boolean {
    return this.informer.hasSynced();
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    return this.informer.waitForSync(signal);
  }
}
