// Who cellfed's components are in the cells, and where their credentials for the cells are in the control
// plane: one identity per component in every cell, each read only by its own component.

/** The namespace the charts run cellfed in (the cellfed chart in the control plane, the cellfed-cell chart in a cell). */
export const COMPONENTS_NAMESPACE = 'cellfed-system';

/** The components that call the cells, each as an identity of its own there. */
export const CELL_COMPONENTS = ['router', 'rebalance-controller', 'backup-controller'] as const;
export type CellComponent = (typeof CELL_COMPONENTS)[number];

/**
 * Where a component's kubeconfig Secrets of the cells are in the control plane: a namespace only it may read
 * (the chart's `<component>.credentialsNamespace`), so no component holds another's credentials.
 */
export const credentialsNamespace = (component: CellComponent) => `cellfed-${component}-cells`;

/** Who a component is in a local cell: its certificate's common name. */
export const localCellUser = (component: CellComponent) => `cellfed-${component}`;

/**
 * Who a component is in a kind cell: a ServiceAccount of the cell's, `cellfed-system/cellfed-<component>-cell`,
 * named apart from the chart's ServiceAccounts in the control plane: the router impersonates its callers'
 * names into the cells, and a caller named like a component would be exempt there (docs/security.md).
 */
export const kindCellAccount = (component: CellComponent) => ({
  kind: 'ServiceAccount' as const,
  name: `cellfed-${component}-cell`,
  namespace: COMPONENTS_NAMESPACE,
});

/** The user name the cell knows a ServiceAccount subject by. */
export const serviceAccountUser = (account: { name: string; namespace: string }) =>
  `system:serviceaccount:${account.namespace}:${account.name}`;

/**
 * The cellfed chart's values that give each component its own cell identity: its credentials namespace, and
 * its user name in the cells (the rebalance controller exempts the others', the router refuses callers by
 * any of them).
 */
export function identityValues(cellUser: (component: CellComponent) => string): string[] {
  const values = {
    router: { credentialsNamespace: credentialsNamespace('router'), cellUser: cellUser('router') },
    rebalanceController: {
      credentialsNamespace: credentialsNamespace('rebalance-controller'),
      cellUser: cellUser('rebalance-controller'),
    },
    backupController: {
      credentialsNamespace: credentialsNamespace('backup-controller'),
      cellUser: cellUser('backup-controller'),
    },
  };
  return Object.entries(values).flatMap(([component, settings]) =>
    Object.entries(settings).flatMap(([key, value]) => [
      '--set-json',
      `${component}.${key}=${JSON.stringify(value)}`,
    ]),
  );
}

/**
 * The flags naming other components' cell users, as the chart passes them: the rebalance controller is
 * given the router's and the backup controller's (it exempts them), the router all three (it refuses them).
 */
export const cellUserArgs = (
  cellUser: (component: CellComponent) => string,
  components: readonly CellComponent[],
) => components.map((component) => `--${component}-cell-user=${cellUser(component)}`);
