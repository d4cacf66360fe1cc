import { itemCellVersions } from './cell-versions.ts';

const FIELD = Buffer.from('"resourceVersion":"');

/**
 * A listed object with a resourceVersion a watch can start from, as one apiserver's list items have: the
 * composite of the list's versions, its own cell's replaced by the object's. A watch from it sees the
 * object's cell from the object's version on, and the other cells from the list's. A write with it goes to
 * the cell with the object's own version (proxy/version-translation.ts), as a watch event's object does.
 *
 * The version is replaced in the item's bytes: the first `"resourceVersion":"` is its metadata's, for an
 * object and for a Table row alike (kube-apiserver writes metadata before spec and status, and a quote in a
 * string value is escaped). An item without one is left as it is.
 */
export function withItemVersion(
  item: Buffer | string,
  cell: string,
  listVersions: ReadonlyMap<string, string>,
): Buffer | string {
  const bytes = typeof item === 'string' ? Buffer.from(item) : item;
  const start = bytes.indexOf(FIELD);
  if (start < 0) return item;
  const valueStart = start + FIELD.length;
  const valueEnd = bytes.indexOf('"', valueStart);
  if (valueEnd < 0) return item;
  const composite = itemCellVersions(listVersions, cell, bytes.toString('utf8', valueStart, valueEnd));
  if (composite === undefined) return item;
  return Buffer.concat([bytes.subarray(0, valueStart), Buffer.from(composite), bytes.subarray(valueEnd)]);
}
