import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { loadAll } from 'js-yaml';

/** The federation chart. */
export const CHART_DIR = fileURLToPath(new URL('../../../../charts/cellfed', import.meta.url));
/** What the components need in each cell. */
export const CELL_CHART_DIR = fileURLToPath(new URL('../../../../charts/cellfed-cell', import.meta.url));

/** One rendered Kubernetes object, as much as the tests read of it. */
export interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** What helm said when it refused: its first line of error, as the user sees it. */
export class HelmRefused extends Error {
  override readonly name = 'HelmRefused';
}

function helm(helmBin: string, args: string[]): string {
  try {
    return execFileSync(helmBin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '');
    throw new HelmRefused(stderr.trim() || (error as Error).message);
  }
}

/** `helm template` of the chart with `args` (e.g. `-f values.yaml`, `--set a=b`): every object it renders. */
export function renderChart(
  helmBin: string,
  args: string[] = [],
  release = 'cellfed',
  namespace = 'cellfed-system',
  chartDir = CHART_DIR,
) {
  const text = helm(helmBin, ['template', release, chartDir, '--namespace', namespace, ...args]);
  return (loadAll(text) as (Rendered | null)[]).filter((object): object is Rendered => object !== null);
}

/** What `helm install` would print after installing the chart with `args` (its NOTES.txt), installing nothing. */
export function chartNotes(helmBin: string, args: string[] = [], chartDir = CHART_DIR): string {
  const out = helm(helmBin, [
    'install',
    'cellfed',
    chartDir,
    '--dry-run=client',
    '--namespace',
    'cellfed-system',
    ...args,
  ]);
  return out.slice(out.indexOf('NOTES:'));
}

/** `helm lint --strict` of the chart with `args`; throws HelmRefused with helm's words when it fails. */
export function lintChart(helmBin: string, args: string[] = [], chartDir = CHART_DIR): string {
  return helm(helmBin, ['lint', '--strict', chartDir, ...args]);
}
