/**
 * What the router control plane's kube-controller-manager leaves off: its quota and disruption controllers
 * would count the control plane's objects only (no pods) and write that over the federation's count of
 * ResourceQuotas and PodDisruptionBudgets, which cellfed's rebalance controller writes (docs/governance.md).
 */
export const CONTROL_PLANE_DISABLED_CONTROLLERS: readonly string[] = ['resourcequota', 'disruption'];

/** kube-controller-manager's `--controllers` value: the default ones and `enabled`, less `disabled`. */
export function controllersFlagValue(disabled: readonly string[], enabled: readonly string[] = []): string {
  return ['*', ...enabled, ...disabled.map((name) => `-${name}`)].join(',');
}

/** The controllers kubeadm turns on beside the default ones (its `--controllers`). */
export const KUBEADM_EXTRA_CONTROLLERS: readonly string[] = ['bootstrapsigner', 'tokencleaner'];
