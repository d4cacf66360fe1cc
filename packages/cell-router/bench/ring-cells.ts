import { parseCellSetSpec } from '@cellfed/api';
import { RoutingTable } from '@cellfed/hashing';

import { call, type BenchEnv, type Target } from '@cellfed/bench-kit';

/**
 * The bench environment's cells as targets (each with its admin's pool), the cell the ring names for a name
 * of `namespace` in an all-Normal CellSet of them (where a bench puts each object, as the router would),
 * and `namespace` made in each cell and in `alsoIn`.
 */
export async function ringCells(
  bench: BenchEnv,
  namespace: string,
  alsoIn: readonly Target[] = [],
): Promise<{ cells: Map<string, Target>; cellOf: (name: string) => Target }> {
  const { env } = bench;
  const cells = new Map(env.cells.map((cell) => [cell.id, { base: cell.url, agent: bench.agent(cell.id) }]));
  const table = RoutingTable.fromCellSet(
    parseCellSetSpec({
      cells: env.cells.map((cell) => ({
        id: cell.id,
        state: 'Normal',
        kubeconfigSecretRef: { name: cell.id },
      })),
    }),
  );
  for (const target of [...alsoIn, ...cells.values()])
    await call(target, 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
  return { cells, cellOf: (name) => cells.get(table.route(table.keyOf({ namespace, name })).oldCell)! };
}
