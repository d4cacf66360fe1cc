import {
  HELD_OWNERS_ANNOTATION,
  ORIGIN_CREATED_ANNOTATION,
  ORIGIN_GENERATION_ANNOTATION,
  ORIGIN_UID_ANNOTATION,
  shownGeneration,
} from '@cellfed/api';
import { REBALANCE_STATUS_LABEL } from '@cellfed/hashing';
import { heldOwners, HeldOwnersError, ownerReferencesOf, shownOwners, without } from '@cellfed/federation';

import { KEPT_ANNOTATIONS } from './cell-owners.ts';
import { humanDuration } from './human-duration.ts';

/**
 * The client view of what a cell stores. A cell keeps what clients send with a few things moved out of its
 * controllers' sight (see views/cell-view.ts); the router puts them back on every way out: single answers,
 * list items, Table rows and watch events: owner references, and the uid and creation time of a copy (a
 * moved object, a promoted backup), which clients know by the first copy's.
 */

const MARKS = [HELD_OWNERS_ANNOTATION, ...KEPT_ANNOTATIONS, REBALANCE_STATUS_LABEL].map((key) => `"${key}"`);
/** What every mark starts with (the spec checks each); what follows it in each. */
const MARK_PREFIX = '"cellfed.io/';
const MARK_ENDS = MARKS.map((mark) => mark.slice(MARK_PREFIX.length));

interface WithMetadata {
  metadata?: {
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    ownerReferences?: unknown;
    uid?: string;
    creationTimestamp?: string;
    generation?: number;
  };
}

export interface ClientViewOptions {
  /**
   * Whether the objects may be copies, shown by the identity clients know (the default). Not for what the
   * cells' controllers make: never copied, it inherits the annotations of what it was made from (a
   * Deployment's ReplicaSet gets the Deployment's `cellfed.io/uid`), which are not its own.
   */
  readonly copies?: boolean;
  /**
   * Where the Table rows shown show creation times, when the rows come without their Table's column
   * definitions (a merged list's rows, a watch's later events).
   */
  readonly columns?: CreationColumns;
  /** The clock an `Age` is printed against (milliseconds since the epoch). */
  readonly now?: () => number;
}

/**
 * Where a Table shows an object's creation: a `date` column holds the timestamp itself (custom resources'
 * `Age`, printed by the client), and built-in resources' `Age` column holds the age the apiserver printed.
 */
export interface CreationColumns {
  readonly dates: readonly number[];
  readonly age?: number;
}

interface ColumnDefinition {
  name?: unknown;
  type?: unknown;
}

/** The creation columns of a Table's `columnDefinitions`; undefined when there are none. */
export function creationColumns(definitions: unknown): CreationColumns | undefined {
  if (!Array.isArray(definitions)) return undefined;
  const columns = definitions as ColumnDefinition[];
  const dates = columns.flatMap((column, index) => (column?.type === 'date' ? [index] : []));
  const age = columns.findIndex((column) => column?.name === 'Age' && column.type === 'string');
  return { dates, ...(age >= 0 ? { age } : {}) };
}

/**
 * Whether a JSON text may need {@link showJson}: one search for where `"cellfed.io/` occurs (in most objects
 * nowhere), and at each such place whether a mark goes on from there, rather than a search per mark.
 */
export function mayNeedClientView(json: Buffer | string): boolean {
  for (let at = json.indexOf(MARK_PREFIX); at >= 0; at = json.indexOf(MARK_PREFIX, at + 1)) {
    const from = at + MARK_PREFIX.length;
    if (MARK_ENDS.some((end) => continuesWith(json, from, end))) return true;
  }
  return false;
}

function continuesWith(json: Buffer | string, from: number, text: string): boolean {
  return typeof json === 'string'
    ? json.startsWith(text, from)
    : json.toString('latin1', from, from + text.length) === text;
}

/**
 * Puts an object's held owner references back into `metadata.ownerReferences` and drops the annotation,
 * in place. A List's items, a Table's rows' objects and a watch event's object are objects too. An annotation
 * that does not parse (edited in a cell by hand) is left as it is: the client sees what is there.
 */
export function showObject(value: unknown, options: ClientViewOptions = {}): void {
  if (typeof value !== 'object' || value === null) return;
  const object = value as WithMetadata & {
    kind?: string;
    items?: unknown[];
    rows?: { object?: unknown }[];
    cells?: unknown[];
    object?: unknown;
  };
  if (Array.isArray(object.items)) for (const item of object.items) showObject(item, options);
  if (object.kind === 'Table' && Array.isArray(object.rows)) {
    const columns = creationColumns((object as { columnDefinitions?: unknown }).columnDefinitions);
    const rowOptions = columns ? { ...options, columns } : options;
    for (const row of object.rows) showObject(row, rowOptions);
  }
  // One row of a Table.
  if (Array.isArray(object.cells)) {
    showCreation(object as TableRow, options);
    showObject(object.object, options);
  }
  const metadata = object.metadata;
  // The fence of a move is the router's and the cells' business: one apiserver never shows such a label. A
  // write cannot drop it: a fenced copy refuses writes (429), and a moved one is never written again.
  if (metadata?.labels && REBALANCE_STATUS_LABEL in metadata.labels) {
    const { [REBALANCE_STATUS_LABEL]: _fence, ...labels } = metadata.labels;
    if (Object.keys(labels).length > 0) metadata.labels = labels;
    else delete metadata.labels;
  }
  const annotations = metadata?.annotations;
  if (!metadata || !annotations) return;
  // A copy is the object clients know: its first uid and creation time, without the annotations that keep
  // them (an update gets them back: views/write-views.ts). What the cells' controllers make inherits them
  // from its owner (a Deployment's ReplicaSet): not its identity, and not shown either.
  if (options.copies !== false) {
    const uid = annotations[ORIGIN_UID_ANNOTATION];
    if (uid && metadata.uid !== undefined) metadata.uid = uid;
    const created = annotations[ORIGIN_CREATED_ANNOTATION];
    if (created && metadata.creationTimestamp !== undefined) metadata.creationTimestamp = created;
    if (annotations[ORIGIN_GENERATION_ANNOTATION] && typeof metadata.generation === 'number')
      showGeneration(object, metadata.generation, annotations);
  }
  if (KEPT_ANNOTATIONS.some((key) => key in annotations)) {
    const rest = without(annotations, [...KEPT_ANNOTATIONS]);
    if (Object.keys(rest).length > 0) metadata.annotations = rest;
    else delete metadata.annotations;
  }
  if (!(HELD_OWNERS_ANNOTATION in annotations)) return;
  let held;
  try {
    held = heldOwners(annotations);
  } catch (error) {
    if (error instanceof HeldOwnersError) return;
    throw error;
  }
  const owners = shownOwners(ownerReferencesOf(metadata), held);
  if (owners.length > 0) metadata.ownerReferences = owners;
  const rest = without(metadata.annotations ?? {}, [HELD_OWNERS_ANNOTATION]);
  if (Object.keys(rest).length > 0) metadata.annotations = rest;
  else delete metadata.annotations;
}

/**
 * A copy's generation, and every `observedGeneration` of its status (its own, its conditions'), as clients
 * know them: a copy's apiserver counts from 1 (ORIGIN_GENERATION_ANNOTATION).
 */
function showGeneration(
  object: WithMetadata & { status?: unknown },
  generation: number,
  annotations: Readonly<Record<string, string>>,
): void {
  const offset = shownGeneration(generation, annotations) - generation;
  if (offset === 0) return;
  object.metadata!.generation = generation + offset;
  const status = object.status as
    { observedGeneration?: unknown; conditions?: { observedGeneration?: unknown }[] } | undefined;
  const shown = generation + offset;
  if (typeof status?.observedGeneration === 'number')
    status.observedGeneration = observedAs(status.observedGeneration, offset, shown);
  if (Array.isArray(status?.conditions))
    for (const condition of status.conditions)
      if (typeof condition?.observedGeneration === 'number')
        condition.observedGeneration = observedAs(condition.observedGeneration, offset, shown);
}

/**
 * An `observedGeneration` as clients count, `offset` from the copy's: 0 (nothing observed) stays 0; and
 * never below 0 nor above the generation shown. A copy's status comes from the copy it was made from, with
 * that copy's count, until its own cell's controllers observe it: that copy had observed at most the
 * generation clients knew.
 */
export function observedAs(observed: number, offset: number, shownGeneration: number): number {
  return observed > 0 ? Math.min(Math.max(0, observed + offset), shownGeneration) : observed;
}

interface TableRow {
  cells: unknown[];
  object?: WithMetadata;
}

/**
 * A copy's row shows its first creation, as its object does: the cell printed the copy's own. A date
 * column is the timestamp (replaced where it is the copy's); the `Age` is printed again from the first.
 */
function showCreation(row: TableRow, options: ClientViewOptions): void {
  const { columns } = options;
  const metadata = row.object?.metadata;
  const created = metadata?.annotations?.[ORIGIN_CREATED_ANNOTATION];
  const stored = metadata?.creationTimestamp;
  if (options.copies === false || !columns || !created || !stored || created === stored) return;
  for (const index of columns.dates) if (row.cells[index] === stored) row.cells[index] = created;
  const createdAt = Date.parse(created);
  if (columns.age !== undefined && typeof row.cells[columns.age] === 'string' && !Number.isNaN(createdAt))
    row.cells[columns.age] = humanDuration((options.now ?? Date.now)() - createdAt);
}

/** The client view of a JSON text: the same bytes when nothing is held, else the object re-encoded. */
export function showJson<T extends Buffer | string>(json: T, options: ClientViewOptions = {}): T | string {
  if (!mayNeedClientView(json)) return json;
  let value: unknown;
  try {
    value = JSON.parse(json.toString());
  } catch {
    return json;
  }
  showObject(value, options);
  return JSON.stringify(value);
}
