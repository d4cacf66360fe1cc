import { COMPOSITE_VERSION_PREFIX } from '@cellfed/federation';

import { CellTokenError } from '../errors.ts';

/**
 * The opaque composite resourceVersion and continue token of a list across cells: every cell's own value,
 * in a versioned encoding (`cf1.` + base64url JSON) that no single apiserver would issue, so the router can
 * tell its tokens from anything else.
 */

/** Each cell's resourceVersion, encoded as one. Cells in a stable order, so equal maps give equal strings. */
export function encodeCellVersions(versions: ReadonlyMap<string, string>): string {
  return encode(sortedPairs(versions));
}

function sortedPairs(versions: ReadonlyMap<string, string>): [string, string][] {
  return [...versions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The cells' versions in a composite resourceVersion; undefined for a value the router did not issue
 * (`0`, empty, or a single apiserver's number).
 */
export function decodeCellVersions(value: string): Map<string, string> | undefined {
  if (!value.startsWith(COMPOSITE_VERSION_PREFIX)) return undefined;
  const pairs = decode(value);
  if (!Array.isArray(pairs) || !pairs.every(isPair)) throw new CellTokenError('malformed resourceVersion');
  return new Map(pairs);
}

/** Where a paged list stopped in one cell: its pinned version, its own continue token, items already given. */
export interface CellCursor {
  readonly rv: string;
  readonly continue?: string;
  /** Items of the page at `continue` (or the first page at `rv`) the client has already been given. */
  readonly skip: number;
  readonly done?: boolean;
}

export function encodeContinue(cursors: ReadonlyMap<string, CellCursor>): string {
  return encode({ cells: Object.fromEntries(cursors) });
}

export function decodeContinue(token: string): Map<string, CellCursor> {
  if (!token.startsWith(COMPOSITE_VERSION_PREFIX))
    throw new CellTokenError('continue key is not valid: not issued by this router');
  const value = decode(token) as { cells?: Record<string, CellCursor> } | undefined;
  const cells = value?.cells;
  if (!cells || typeof cells !== 'object') throw new CellTokenError('continue key is not valid');
  for (const cursor of Object.values(cells)) {
    if (typeof cursor?.rv !== 'string' || !Number.isInteger(cursor.skip) || cursor.skip < 0)
      throw new CellTokenError('continue key is not valid');
  }
  return new Map(Object.entries(cells));
}

function encode(value: unknown): string {
  return COMPOSITE_VERSION_PREFIX + Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decode(value: string): unknown {
  try {
    return JSON.parse(
      Buffer.from(value.slice(COMPOSITE_VERSION_PREFIX.length), 'base64url').toString('utf8'),
    );
  } catch {
    throw new CellTokenError('malformed token');
  }
}

function isPair(value: unknown): value is [string, string] {
  return (
    Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string'
  );
}
