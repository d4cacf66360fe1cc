/**
 * What the router control plane's kube-controller-manager leaves off: its quota, disruption, autoscaler and
 * volume binder controllers would look at the control plane's objects only (no pods, no cellular targets,
 * no volumes) and write that over the status of ResourceQuotas, PodDisruptionBudgets,
 * HorizontalPodAutoscalers and PersistentVolumeClaims, which cellfed's rebalance controller writes from the
 * cells (docs/governance.md).
 */
export const CONTROL_PLANE_DISABLED_CONTROLLERS: readonly string[] = [
  'resourcequota',
  'disruption',
  'horizontalpodautoscaling',
  'persistentvolume-binder',
];

/** kube-controller-manager's `--controllers` value: the default ones and `enabled`, less `disabled`. */
export function controllersFlagValue(disabled: readonly string[], enabled: readonly string[] = []): string {
  return ['*', ...enabled, ...disabled.map((name) => `-${name}`)].join(',');
}

/** The controllers kubeadm turns on beside the default ones (its `--controllers`). */
export const KUBEADM_EXTRA_CONTROLLERS: readonly string[] = ['bootstrapsigner', 'tokencleaner'];
