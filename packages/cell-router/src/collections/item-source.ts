import type { CellCursor } from './cell-versions.ts';

/**
 * One cell's list as the merge reads it: items in the apiserver's order (namespace, then name), one head
 * at a time. Paged (cell-pager.ts) for a client's page or a Table, streamed (cell-stream.ts) for a whole
 * JSON list.
 */
export interface ItemSource {
  readonly cell: string;
  /** The answer's kind, version and list resourceVersion (and a Table's columns); starts the list. */
  first(): Promise<CellPage>;
  /**
   * The list's kind, version and resourceVersion, complete once the source has ended: a custom resource
   * list writes them after its items (apiextensions-apiserver sorts its keys), so a streamed one learns
   * them last.
   */
  listFields(): ListFields;
  /** Whether `head` answers without waiting: an item is in, or the cell's list has ended. */
  ready(): boolean;
  /** Waits until `ready`; answers the head. */
  peek(): Promise<unknown>;
  /** The next item, parsed (undefined at the end); only when `ready`. */
  head(): unknown;
  /** The head as the cell wrote it, to pass on. */
  headJson(): Buffer | string;
  /** The head's `namespace/name`, the merge's order; only when `ready` and not at the end. */
  headKey(table: boolean): string;
  take(): void;
  /** Whether items may follow (for a client's next page). */
  hasMore(): boolean;
  /** Where to pick up in this cell for the client's next page. */
  cursor(): CellCursor;
}

/** What a list item (an object, or a Table row) is known by: its metadata. */
export interface ItemMeta {
  namespace?: string;
  name?: string;
  labels?: Record<string, string>;
  creationTimestamp?: string;
  /** Read only for their `controller` flags (see madeByItsCell). */
  ownerReferences?: readonly unknown[];
}

/** What a list says of itself. */
export interface ListFields {
  readonly kind: string;
  readonly apiVersion: string;
  /** The list's own resourceVersion (pinned by the first page). */
  readonly resourceVersion: string;
}

/** One page of a cell's list as its apiserver answered. */
export interface CellPage {
  readonly kind: string;
  readonly apiVersion: string;
  /** The list's own resourceVersion (pinned by the first page). */
  readonly resourceVersion: string;
  readonly continue: string | undefined;
  /** `items` of a list, `rows` of a Table. */
  readonly items: unknown[];
  /** Each item's bytes as the cell wrote them (absent if they could not be told apart). */
  readonly raw?: Buffer[];
  /** The Table's column definitions (absent for lists). */
  readonly columnDefinitions?: unknown[];
}
