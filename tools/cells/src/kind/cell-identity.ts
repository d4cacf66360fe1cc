import { readFileSync } from 'node:fs';

import { dump, load } from 'js-yaml';

import { CELL_COMPONENTS_USER, COMPONENTS_NAMESPACE, cellRbac } from '../chart/component-rbac.ts';
import { applyObjects } from '../control-plane/bootstrap.ts';
import { serviceAccountToken } from '../control-plane/service-account-token.ts';
import type { KindClusterPlan } from './kind-plan.ts';

/** How long the components' token in a kind cell lasts: longer than any run on it. */
const TOKEN_SECONDS = 7 * 24 * 3600;

/**
 * What cellfed's components get in a kind cell, for its kubeconfig Secret: not kind's admin, but a
 * ServiceAccount of their own (`cellfed-system/cellfed-components`) that only the cellfed-cell chart's
 * bindings give any right. Applies the chart's RBAC and answers the cell's internal kubeconfig with that
 * ServiceAccount's token as its user.
 */
export async function leastPrivilegeCellKubeconfig(plan: KindClusterPlan, helm: string): Promise<string> {
  const account = {
    kind: 'ServiceAccount' as const,
    name: CELL_COMPONENTS_USER,
    namespace: COMPONENTS_NAMESPACE,
  };
  await applyObjects(plan.kubeconfig, [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: account.name, namespace: account.namespace },
    },
    ...cellRbac(helm, {}, account),
  ]);
  const token = await serviceAccountToken(plan.kubeconfig, account.namespace, account.name, TOKEN_SECONDS);
  const internal = load(readFileSync(plan.internalKubeconfig, 'utf8')) as {
    users?: { name: string; user: Record<string, unknown> }[];
  };
  for (const user of internal.users ?? []) user.user = { token };
  return dump(internal);
}
