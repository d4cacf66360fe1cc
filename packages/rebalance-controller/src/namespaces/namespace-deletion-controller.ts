import { Controller, type ControlPlaneNamespaces, type KubeClient } from '@cellfed/controller-kit';

import type { CellLookup } from '../cell-end.ts';
import type { LeadingController, RunnerOptions } from '../leading-controller.ts';
import type { PlanHolder } from '../rebalance-plan.ts';
import {
  NAMESPACE_KEYS,
  NamespaceDeletionReconciler,
  type NamespaceKey,
} from './namespace-deletion-reconciler.ts';

export interface NamespaceDeletionControllerOptions {
  controlPlane: KubeClient;
  plans: PlanHolder;
  namespaces: ControlPlaneNamespaces;
  cell: CellLookup;
  runner: RunnerOptions;
}

/**
 * The control plane's namespaces (keyed by name), each finalized by {@link NamespaceDeletionReconciler}: a
 * namespace is queued when it changes, and all of them when the controller starts.
 */
export class NamespaceDeletionController implements LeadingController {
  private readonly controller: Controller<NamespaceKey>;
  private readonly namespaces: ControlPlaneNamespaces;

  constructor(options: NamespaceDeletionControllerOptions) {
    const { namespaces } = options;
    this.namespaces = namespaces;
    this.controller = new Controller({
      ...options.runner,
      name: 'namespace-deletion',
      reconciler: new NamespaceDeletionReconciler({
        plans: options.plans,
        controlPlane: options.controlPlane,
        namespace: (name) => namespaces.metadata(name),
        cell: options.cell,
      }),
      keys: NAMESPACE_KEYS,
    });
    namespaces.onChange(({ name, lane }) => this.controller.enqueue({ name }, lane));
  }

  start(): void {
    for (const namespace of this.namespaces.list())
      if (namespace.metadata.name) this.controller.enqueue({ name: namespace.metadata.name }, 'low');
    this.controller.start();
  }

  stop(): Promise<boolean> {
    return this.controller.stop(5000);
  }
}
