/**
 * What the router control plane's kube-controller-manager leaves off: its quota, disruption and autoscaler
 * controllers would look at the control plane's objects only (no pods, no cellular targets) and write that
 * over the status of ResourceQuotas, PodDisruptionBudgets and HorizontalPodAutoscalers, which cellfed's
 * rebalance controller writes from the cells (docs/governance.md).
 */
export const CONTROL_PLANE_DISABLED_CONTROLLERS: readonly string[] = [
  'resourcequota',
  'disruption',
  'horizontalpodautoscaling',
];

/** kube-controller-manager's `--controllers` value: the default ones and `enabled`, less `disabled`. */
export function controllersFlagValue(disabled: readonly string[], enabled: readonly string[] = []): string {
  return ['*', ...enabled, ...disabled.map((name) => `-${name}`)].join(',');
}

/** The controllers kubeadm turns on beside the default ones (its `--controllers`). */
export const KUBEADM_EXTRA_CONTROLLERS: readonly string[] = ['bootstrapsigner', 'tokencleaner'];
