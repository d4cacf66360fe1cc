import { readFileSync } from 'node:fs';

import { dump, load } from 'js-yaml';

import { CELL_COMPONENTS, kindCellAccount, type CellComponent } from '../chart/cell-identities.ts';
import { cellRbac } from '../chart/component-rbac.ts';
import { applyObjects } from '../control-plane/bootstrap.ts';
import { serviceAccountToken } from '../control-plane/service-account-token.ts';
import type { KindClusterPlan } from './kind-plan.ts';

/** How long the components' token in a kind cell lasts: longer than any run on it. */
const TOKEN_SECONDS = 7 * 24 * 3600;

/**
 * What cellfed's components get in a kind cell, for their kubeconfig Secrets: not kind's admin, but a
 * ServiceAccount each (`cellfed-system/cellfed-<component>-cell`) that only the cellfed-cell chart's bindings for
 * that component give any right. Applies the chart's RBAC and answers the cell's internal kubeconfig with
 * each ServiceAccount's token as its user.
 */
export async function leastPrivilegeCellKubeconfigs(
  plan: KindClusterPlan,
  helm: string,
): Promise<Record<CellComponent, string>> {
  await applyObjects(plan.kubeconfig, [
    ...CELL_COMPONENTS.map((component) => {
      const { name, namespace } = kindCellAccount(component);
      return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } };
    }),
    ...cellRbac(helm, {}, kindCellAccount),
  ]);
  const text = readFileSync(plan.internalKubeconfig, 'utf8');
  const kubeconfigs = {} as Record<CellComponent, string>;
  for (const component of CELL_COMPONENTS) {
    const { name, namespace } = kindCellAccount(component);
    const token = await serviceAccountToken(plan.kubeconfig, namespace, name, TOKEN_SECONDS);
    // Parsed anew for each component: each gets a copy with its own token.
    const internal = load(text) as { users?: { name: string; user: Record<string, unknown> }[] };
    for (const user of internal.users ?? []) user.user = { token };
    kubeconfigs[component] = dump(internal);
  }
  return kubeconfigs;
}
