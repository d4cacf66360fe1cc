import { CellTokenError, OneCellVersionError } from '../errors.ts';

/**
 * The opaque composite resourceVersion and continue token of a list across cells: every cell's own value,
 * in a versioned encoding (`cf1.` + base64url JSON) that no single apiserver would issue, so the router can
 * tell its tokens from anything else.
 */
const PREFIX = 'cf1.';

/** Each cell's resourceVersion, encoded as one. Cells in a stable order, so equal maps give equal strings. */
export function encodeCellVersions(versions: ReadonlyMap<string, string>): string {
  return encode(sortedPairs(versions));
}

function sortedPairs(versions: ReadonlyMap<string, string>): [string, string][] {
  return [...versions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * A listed item's composite resourceVersion: the list's versions with the item's own cell at the item's
 * own version (see item-version.ts); undefined when that is not one apiserver's number. `listVersions` is
 * the list's, fixed when it started: what is made of it is kept for the list's other items.
 */
export function itemCellVersions(
  listVersions: ReadonlyMap<string, string>,
  cell: string,
  own: string | undefined,
): string | undefined {
  if (!own || !/^[0-9]+$/.test(own)) return undefined;
  let templates = ITEM_TEMPLATES.get(listVersions);
  if (!templates) ITEM_TEMPLATES.set(listVersions, (templates = new Map()));
  let template = templates.get(cell);
  if (!template) templates.set(cell, (template = itemTemplate(listVersions, cell)));
  return PREFIX + Buffer.from(template[0] + own + template[1]).toString('base64url');
}

/**
 * Per list (its versions map) and cell, the encoded JSON around an item's own number: a list writes one
 * version per item, and sorting and writing every cell's version for each was a tenth of a merge's time.
 */
const ITEM_TEMPLATES = new WeakMap<ReadonlyMap<string, string>, Map<string, [string, string]>>();
/** Stands for the item's own number while the template is written; no cell id or number holds it. */
const OWN = '#';

function itemTemplate(listVersions: ReadonlyMap<string, string>, cell: string): [string, string] {
  const json = JSON.stringify(sortedPairs(new Map([...listVersions, [cell, OWN]])));
  const at = json.indexOf(`"${OWN}"`) + 1;
  return [json.slice(0, at), json.slice(at + OWN.length)];
}

/**
 * The cells' versions in a composite resourceVersion; undefined for a value the router did not issue
 * (`0`, empty, or a single apiserver's number).
 */
export function decodeCellVersions(value: string): Map<string, string> | undefined {
  if (!value.startsWith(PREFIX)) return undefined;
  const pairs = decode(value);
  if (!Array.isArray(pairs) || !pairs.every(isPair)) throw new CellTokenError('malformed resourceVersion');
  return new Map(pairs);
}

/**
 * The cells' versions a client asks a list or watch for: none for `''` and `0` (kube's "latest" and
 * "any"); otherwise the router's own composite, or a {@link CellTokenError}.
 */
export function requestedCellVersions(resourceVersion: string): Map<string, string> | undefined {
  if (resourceVersion === '' || resourceVersion === '0') return undefined;
  const versions = decodeCellVersions(resourceVersion);
  if (!versions && /^[0-9]+$/.test(resourceVersion))
    throw new OneCellVersionError(
      `resourceVersion ${resourceVersion} is one cell's, not the federation's: list again, and start from the list's resourceVersion`,
    );
  if (!versions)
    throw new CellTokenError(`resourceVersion "${resourceVersion}" was not issued by this router`);
  return versions;
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
  if (!token.startsWith(PREFIX))
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
  return PREFIX + Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decode(value: string): unknown {
  try {
    return JSON.parse(Buffer.from(value.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw new CellTokenError('malformed token');
  }
}

function isPair(value: unknown): value is [string, string] {
  return (
    Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string'
  );
}
