import type { CellSetSpec } from '@cellfed/api';
import { RoutingTable } from '@cellfed/hashing';

/** Where one object lives under a CellSet: computed from the CellSet and the namespace's labels alone. */
export interface Whereabouts {
  key: string;
  /** The cell that serves it now (the old cell while a move has not committed). */
  cell: string;
  /** Where its backup is kept: the next distinct cell clockwise, where it goes if `cell` fails. */
  backup: string | undefined;
  /** `settled`, or that it moves from `cell` to another, or that it was restored from a Down cell. */
  state: string;
}

/** Where `namespace/name` lives under `spec` (`namespaceLabels`: its namespace's, for `cellfed.io/shard-by`). */
export function whereIs(
  spec: CellSetSpec,
  ref: { namespace: string; name: string },
  namespaceLabels?: Readonly<Record<string, string>>,
): Whereabouts {
  const table = RoutingTable.fromCellSet(spec);
  const key = table.keyOf(ref, namespaceLabels);
  const decision = table.route(key);
  const down = table.failedOverFrom(key);
  const state =
    decision.case !== 4
      ? `moving to ${decision.newCell} (${table.stateOf(decision.newCell) === 'Joining' ? `${decision.newCell} is joining` : `${decision.oldCell} is draining`})`
      : down
        ? `failed over from ${down} (Down): served from its backup until promoted`
        : 'settled';
  return { key, cell: decision.oldCell, backup: table.backupOf(key, decision.oldCell), state };
}
