import { KubeConfig } from '@kubernetes/client-node';

import { CellsCliError, CellsCliErrorCode } from './errors.ts';

/**
 * The operator's own way into a cell, to read a backup there: the context of their kubeconfig that
 * `--cell-context` names for the cell, else the one named as the cell. The cells' kubeconfig Secrets in the
 * control plane are cellfed's components' credentials and are never read here: they may do more in a cell
 * than the operator may, and what such a Secret holds (an exec plugin) would run on the operator's machine.
 * The cell's RBAC decides what the operator reads, as it does for kubectl.
 */
export function cellKubeConfig(
  operator: KubeConfig,
  cell: string,
  named: Record<string, string>,
): KubeConfig {
  const context = named[cell] ?? cell;
  if (!operator.getContextObject(context))
    throw new CellsCliError(
      CellsCliErrorCode.NoCellContext,
      named[cell] === undefined
        ? `cell ${cell}: your kubeconfig has no context named ${cell}; name the one that reaches the cell with --cell-context ${cell}=CONTEXT`
        : `cell ${cell}: your kubeconfig has no context "${context}" (--cell-context ${cell}=${context})`,
    );
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: operator.clusters,
    users: operator.users,
    contexts: operator.contexts,
    currentContext: context,
  });
  return config;
}
