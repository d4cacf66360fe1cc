import type { CellSetSpec, GroupVersionResource } from '@cellfed/api';
import { RoutingTable } from '@cellfed/hashing';

import { liveCells } from './cells.ts';
import { resourceName } from './resource-path.ts';

/**
 * One generation of a validated CellSet, compiled for routing: what the router and both controllers read
 * and swap whole when the CellSet changes. Each adds what only it needs (the router its resource matchers,
 * the rebalance controller its gate) by extending it.
 */
export interface CellSetGeneration {
  readonly generation: number;
  readonly spec: CellSetSpec;
  /** The routing rule of this generation (rings, cell states, previous weights). */
  readonly table: RoutingTable;
  /** The cellular resources, by `resourceName` (`deployments.apps`). */
  readonly resources: ReadonlyMap<string, GroupVersionResource>;
  /** The cells that are not Down, in the CellSet's order (see {@link liveCells}). */
  readonly liveCells: readonly string[];
}

/** Compiles a validated CellSet spec of `generation`. */
export function compileCellSet(spec: CellSetSpec, generation: number): CellSetGeneration {
  return {
    generation,
    spec,
    table: RoutingTable.fromCellSet(spec),
    resources: new Map(spec.cellularResources.map((gvr) => [resourceName(gvr), gvr])),
    liveCells: liveCells(spec),
  };
}
