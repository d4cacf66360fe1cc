import { parseCellSetSpec, type CellSetSpecInput } from '@cellfed/api';
import { KubeClient } from '@cellfed/controller-kit';
import { RoutingTable } from '@cellfed/hashing';

import { cellSetSettled, cellSetSpec, eventually, readCellSet, updateCellSet } from './clients.ts';
import type { EnvFile } from '@cellfed/cells/env-file.ts';
import {
  startRebalancedFederation,
  stopRebalancedFederation,
  type RebalancedFederation,
} from './scratch-federation.ts';

/**
 * A federation of the environment's first two cells that its third joins, for suites that compare routing
 * before and after: the two specs, their routing tables, and clients of the control plane (one plain
 * apiserver) and of every cell. Close the clients with {@link closeJoinFixture}.
 */
export function joinFixture(env: EnvFile) {
  const [one, two, three] = env.cells.map((cell) => cell.id) as [string, string, string];
  const TWO_CELLS = cellSetSpec({ [one]: 'Normal', [two]: 'Normal' });
  const JOINING = cellSetSpec({ [one]: 'Normal', [two]: 'Normal', [three]: 'Joining' });
  const tableOf = (spec: CellSetSpecInput) => RoutingTable.fromCellSet(parseCellSetSpec(spec));
  return {
    one,
    two,
    three,
    TWO_CELLS,
    JOINING,
    before: tableOf(TWO_CELLS),
    after: tableOf(JOINING),
    plain: KubeClient.fromFile(env.controlPlane.kubeconfig),
    cells: new Map(env.cells.map((cell) => [cell.id, KubeClient.fromFile(cell.kubeconfig)])),
  };
}

/** The first `prefix-N` that satisfies `wanted` (a name placed in the cell a test needs). */
export function pickName(prefix: string, wanted: (name: string) => boolean): string {
  const name = Array.from({ length: 200 }, (_, i) => `${prefix}-${i}`).find(wanted);
  if (name === undefined) throw new Error(`no ${prefix}-N of 200 is placed as the test needs`);
  return name;
}

export async function closeJoinFixture(fixture: ReturnType<typeof joinFixture>): Promise<void> {
  for (const client of [fixture.plain, ...fixture.cells.values()]) await client.close();
}

/**
 * Makes the fixture's third cell join `cellSetName` and waits until it is Normal and the CellSet settled;
 * `whilePolling` runs at every poll (to sample what clients see during the move).
 */
export async function joinThirdCell(
  env: EnvFile,
  fixture: ReturnType<typeof joinFixture>,
  cellSetName: string,
  whilePolling: () => Promise<void> = async () => undefined,
): Promise<void> {
  await updateCellSet(env.controlPlane.kubeconfig, cellSetName, fixture.JOINING);
  await eventually(
    `cell ${fixture.three} to join and the CellSet to settle`,
    async () => {
      await whilePolling();
      const { spec } = (await readCellSet(env.controlPlane.kubeconfig, cellSetName)) as {
        spec: CellSetSpecInput;
      };
      const joined = spec.cells.find((c) => c.id === fixture.three)?.state === 'Normal';
      return joined && (await cellSetSettled(env.controlPlane.kubeconfig, cellSetName)) ? true : undefined;
    },
    180_000,
  );
}

/**
 * After {@link joinThirdCell}: drains the fixture's first cell and waits until it has left `cellSetName`;
 * `whileDraining` runs once the drain has been asked for.
 */
export async function drainFirstCell(
  env: EnvFile,
  fixture: ReturnType<typeof joinFixture>,
  cellSetName: string,
  whileDraining: () => Promise<void> = async () => undefined,
): Promise<void> {
  const { one, two, three } = fixture;
  await updateCellSet(
    env.controlPlane.kubeconfig,
    cellSetName,
    cellSetSpec({ [one]: 'Draining', [two]: 'Normal', [three]: 'Normal' }),
  );
  await whileDraining();
  await eventually(
    `the drained cell ${one} to leave the CellSet`,
    async () => {
      const { spec } = (await readCellSet(env.controlPlane.kubeconfig, cellSetName)) as {
        spec: CellSetSpecInput;
      };
      return spec.cells.some((cell) => cell.id === one) ? undefined : true;
    },
    180_000,
  );
}

/** The namespace of one plain apiserver (the control plane) that a suite compares `namespace` with. */
export const plainNamespaceOf = (namespace: string) => `${namespace}-plain`;

/**
 * The fixture's first two cells as a federation with its rebalance controller (mirror and deletes quick, so a
 * join settles in seconds), `namespace` made through its router with `deployments`, and
 * {@link plainNamespaceOf} `namespace` made on the plain apiserver. Undo with {@link stopJoinFederation}.
 */
export async function startJoinFederation(
  env: EnvFile,
  fixture: ReturnType<typeof joinFixture>,
  options: {
    cellSetName: string;
    namespace: string;
    deployments?: readonly string[];
    /** Count its quotas (kube's quota controller through its router). */
    quotaController?: boolean;
  },
): Promise<RebalancedFederation> {
  const started = await startRebalancedFederation(
    env,
    {
      cellSetName: options.cellSetName,
      spec: fixture.TWO_CELLS,
      namespace: options.namespace,
      deployments: options.deployments ?? [],
      cells: [fixture.one, fixture.two],
      ...(options.quotaController ? { quotaController: true } : {}),
    },
    ['--delete-after', '4s', '--mirror-resync', '2s'],
  );
  await fixture.plain.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: plainNamespaceOf(options.namespace) } },
  });
  return started;
}

/** Undoes {@link startJoinFederation} (also half-way) and closes the fixture's clients. */
export async function stopJoinFederation(
  env: EnvFile,
  fixture: ReturnType<typeof joinFixture>,
  started: RebalancedFederation | undefined,
  options: { cellSetName: string; namespace: string },
): Promise<void> {
  await fixture.plain
    .request('DELETE', `/api/v1/namespaces/${plainNamespaceOf(options.namespace)}`)
    .catch(() => undefined);
  await stopRebalancedFederation(env, started, options);
  await closeJoinFixture(fixture);
}
