import { type CellSetSpec, type GroupVersionResource } from '@cellfed/api';
import { RoutingTable } from '@cellfed/hashing';
import { resourceName } from '@cellfed/controller-kit';
import { liveCells } from '@cellfed/federation';

/** The CellSet generation the backup controller works to: its rings, cellular resources and live cells. */
export interface Federation {
  readonly generation: number;
  readonly table: RoutingTable;
  /** Cellular resources by `resource.group`. */
  readonly resources: ReadonlyMap<string, GroupVersionResource>;
  /** Every cell that is not Down: the only cells whose objects and backups count. */
  readonly liveCells: ReadonlySet<string>;
}

/** The federation of a validated CellSet spec. */
export function federationOf(spec: CellSetSpec, generation: number): Federation {
  return {
    generation,
    table: RoutingTable.fromCellSet(spec),
    resources: new Map(spec.cellularResources.map((gvr) => [resourceName(gvr), gvr])),
    liveCells: new Set(liveCells(spec)),
  };
}
