import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

import { E2eError, E2eErrorCode } from './errors.ts';

/** The binaries scripts/build-tools.sh builds from e2e/tools. */
export const TOOL_NAMES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kubectl',
  'helm',
  'informer',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
export type Tools = Record<ToolName, string>;

/**
 * Paths of the tools in `binDir`, checked to be executable. The directory comes from the caller's config
 * (`--tools`, or CELLFED_TOOLS_BIN that scripts/cells.sh and scripts/test.sh set), never found by searching.
 */
export function resolveTools(binDir: string | undefined, needed: readonly ToolName[] = TOOL_NAMES): Tools {
  if (!binDir) {
    throw new E2eError(
      E2eErrorCode.ToolsMissing,
      'no tools directory: run scripts/build-tools.sh and pass the directory it prints as --tools or CELLFED_TOOLS_BIN',
    );
  }
  const tools = Object.fromEntries(TOOL_NAMES.map((name) => [name, join(binDir, name)])) as Tools;
  const missing = needed.filter((name) => {
    try {
      accessSync(tools[name], constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    throw new E2eError(
      E2eErrorCode.ToolsMissing,
      `${missing.join(', ')} not found in ${binDir}: run scripts/build-tools.sh (a cold build takes many minutes)`,
    );
  }
  return tools;
}
