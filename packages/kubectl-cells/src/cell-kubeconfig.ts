import { KubeConfig } from '@kubernetes/client-node';

import { CellsCliError, CellsCliErrorCode } from './errors.ts';

/**
 * A cell's kubeconfig, from its Secret in the control plane, checked before anything uses it on the
 * operator's machine: it may carry only static credentials (a client certificate, a token). An exec plugin
 * or an auth provider would run a command the Secret names with the operator's rights, so whoever may write
 * that Secret could run code on every machine that reads a backup: refused, with the cell's name. Nothing
 * of it is written to disk.
 */
export function staticCellKubeconfig(cell: string, text: string): string {
  const config = new KubeConfig();
  try {
    config.loadFromString(text);
  } catch (error) {
    throw new CellsCliError(
      CellsCliErrorCode.UnsafeCellCredentials,
      `cell ${cell}: its kubeconfig Secret does not parse (${(error as Error).message})`,
    );
  }
  const plugin = config.users.find((user) => user.exec !== undefined || user.authProvider !== undefined);
  if (plugin)
    throw new CellsCliError(
      CellsCliErrorCode.UnsafeCellCredentials,
      `cell ${cell}: its kubeconfig Secret's user ${plugin.name} runs an exec plugin or auth provider; refusing to run it here (use a kubeconfig with a client certificate or a token)`,
    );
  return text;
}
