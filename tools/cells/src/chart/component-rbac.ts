import { applyObjects } from '../control-plane/bootstrap.ts';
import { CELL_CHART_DIR, CHART_DIR, renderChart, type Rendered } from './helm-chart.ts';

/**
 * cellfed's components, as the chart names them (`cellfed-<component>`); the quota controller is
 * kube-controller-manager's quota controller, which calls the router.
 */
export const COMPONENTS = [
  'router',
  'rebalance-controller',
  'backup-controller',
  'quota-controller',
] as const;
export type ComponentName = (typeof COMPONENTS)[number];

/** The namespace the chart runs them in, in the router control plane. */
export const COMPONENTS_NAMESPACE = 'cellfed-system';

/** A component's ServiceAccount in the control plane, as the chart (release `cellfed`) names it. */
export const componentServiceAccount = (component: ComponentName) => `cellfed-${component}`;

/** Who the components are in a cell: the one identity of the cell's kubeconfig Secret. */
export const CELL_COMPONENTS_USER = 'cellfed-components';

/**
 * What the cellfed chart makes that governs its components: their identities and RBAC, and the admission
 * policy that holds the quota controller's status writes until a quota is divided.
 */
const RBAC_KINDS = new Set([
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

/** What the cellfed chart is installed with, beyond its defaults. */
export interface ControlPlaneRbacValues {
  /** rebalanceController.sharedResourceRules: to read what a CellSet shares (Secrets, say). */
  readonly sharedResourceRules?: readonly { apiGroups: string[]; resources: string[]; verbs: string[] }[];
}

/**
 * The cellfed chart's RBAC (release `cellfed`) and its admission policy, as it would install them: nothing
 * else of the chart.
 */
export function controlPlaneRbac(helm: string, values: ControlPlaneRbacValues = {}): Rendered[] {
  const args = values.sharedResourceRules
    ? ['--set-json', `rebalanceController.sharedResourceRules=${JSON.stringify(values.sharedResourceRules)}`]
    : [];
  return renderChart(helm, args, 'cellfed', COMPONENTS_NAMESPACE, CHART_DIR).filter((object) =>
    RBAC_KINDS.has(object.kind),
  );
}

/** Installs the cellfed chart's RBAC into the control plane, as `helm upgrade` with `values` would. */
export async function installControlPlaneRbac(
  kubeconfigFile: string,
  helm: string,
  values: ControlPlaneRbacValues = {},
): Promise<void> {
  await applyObjects(kubeconfigFile, controlPlaneRbac(helm, values));
}

/** What a cell's chart is installed with: the CellSet's resources (the chart's defaults when absent). */
export interface CellRbacValues {
  readonly cellularResources?: readonly { group: string; resource: string }[];
  readonly sharedResources?: readonly { group: string; resource: string }[];
}

/** An RBAC subject: who a chart's bindings name. */
export interface Subject {
  readonly kind: 'User' | 'Group' | 'ServiceAccount';
  readonly name: string;
  readonly namespace?: string;
}

/**
 * The cellfed-cell chart (release `cellfed`), every component bound to `subject`: by default the user
 * {@link CELL_COMPONENTS_USER} (a local cell's certificate).
 */
export function cellRbac(
  helm: string,
  values: CellRbacValues = {},
  subject: Subject = { kind: 'User', name: CELL_COMPONENTS_USER },
): Rendered[] {
  const subjects = JSON.stringify([subject]);
  const args = [
    ...['--set-json', `router.subjects=${subjects}`],
    ...['--set-json', `rebalanceController.subjects=${subjects}`],
    ...['--set-json', `backupController.subjects=${subjects}`],
    ...(values.cellularResources
      ? ['--set-json', `cellularResources=${JSON.stringify(values.cellularResources)}`]
      : []),
    ...(values.sharedResources
      ? ['--set-json', `sharedResources=${JSON.stringify(values.sharedResources)}`]
      : []),
  ];
  return renderChart(helm, args, 'cellfed', COMPONENTS_NAMESPACE, CELL_CHART_DIR);
}

/**
 * Installs the cellfed-cell chart's RBAC into a cell, as an operator does into every cell (and again into a
 * cell rebuilt empty): what the components may do there, bound to {@link CELL_COMPONENTS_USER}.
 */
export async function installCellRbac(
  kubeconfigFile: string,
  helm: string,
  values: CellRbacValues = {},
): Promise<void> {
  await applyObjects(kubeconfigFile, cellRbac(helm, values));
}
