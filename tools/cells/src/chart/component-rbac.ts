import { applyObjects } from '../control-plane/bootstrap.ts';
import {
  COMPONENTS_NAMESPACE,
  identityValues,
  localCellUser,
  type CellComponent,
} from './cell-identities.ts';
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

/** A component's ServiceAccount in the control plane, as the chart (release `cellfed`) names it. */
export const componentServiceAccount = (component: ComponentName) => `cellfed-${component}`;

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
 * else of the chart. Each component reads its cell credentials from its own namespace (a local cell's
 * identities: {@link localCellUser}).
 */
export function controlPlaneRbac(helm: string, values: ControlPlaneRbacValues = {}): Rendered[] {
  const args = [
    ...identityValues(localCellUser),
    ...(values.sharedResourceRules
      ? [
          '--set-json',
          `rebalanceController.sharedResourceRules=${JSON.stringify(values.sharedResourceRules)}`,
        ]
      : []),
  ];
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

/** A local cell's subjects: each component's certificate user ({@link localCellUser}). */
export const localCellSubject = (component: CellComponent): Subject => ({
  kind: 'User',
  name: localCellUser(component),
});

/**
 * The cellfed-cell chart (release `cellfed`), each component bound to its own subject: by default a local
 * cell's certificate users ({@link localCellSubject}).
 */
export function cellRbac(
  helm: string,
  values: CellRbacValues = {},
  subject: (component: CellComponent) => Subject = localCellSubject,
): Rendered[] {
  const subjects = (component: CellComponent) => JSON.stringify([subject(component)]);
  const args = [
    ...['--set-json', `router.subjects=${subjects('router')}`],
    ...['--set-json', `rebalanceController.subjects=${subjects('rebalance-controller')}`],
    ...['--set-json', `backupController.subjects=${subjects('backup-controller')}`],
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
 * cell rebuilt empty): what each component may do there, bound to its local certificate user.
 */
export async function installCellRbac(
  kubeconfigFile: string,
  helm: string,
  values: CellRbacValues = {},
): Promise<void> {
  await applyObjects(kubeconfigFile, cellRbac(helm, values));
}
