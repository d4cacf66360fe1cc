import { cellFailure, type KubeStatus } from '../status/kube-status.ts';
import type { CellCursor } from './cell-versions.ts';

/** What a list item (an object, or a Table row) is known by: its metadata. */
export interface ItemMeta {
  namespace?: string;
  name?: string;
  labels?: Record<string, string>;
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
  /** The Table's column definitions (absent for lists). */
  readonly columnDefinitions?: unknown[];
}

/** A cell answered a page with an error: its Status is what the client gets (naming the cell). */
export class CellListError extends Error {
  override readonly name = 'CellListError';
  readonly status: KubeStatus;

  constructor(cell: string, code: number, text: string) {
    const status = cellFailure(cell, code, text);
    super(status.message);
    this.status = status;
  }
}

/** What the pager needs of a cell's client (KubeClient.raw): one GET, its status and body text. */
export interface CellLister {
  raw(
    method: 'GET',
    target: string,
    options: { headers: Record<string, string | string[]>; signal: AbortSignal },
  ): Promise<{ statusCode: number; body: { text(): Promise<string> } }>;
}

export interface PagerRequest {
  readonly client: CellLister;
  readonly cell: string;
  /** The collection path (no query). */
  readonly path: string;
  /** The caller's query without limit, continue, resourceVersion and resourceVersionMatch. */
  readonly query: URLSearchParams;
  /** The caller's headers as sent on (impersonation, a JSON accept). */
  readonly headers: Record<string, string | string[]>;
  readonly pageSize: number;
  readonly signal: AbortSignal;
}

/**
 * A cell's list read page by page, from where a cursor says (or from the start), as a stream of items in
 * the apiserver's order (by namespace, then name) with `peek` for the merge. The first page pins the
 * cell's resourceVersion; later pages follow the cell's own continue tokens.
 */
export class CellPager {
  readonly cell: string;
  private readonly request: PagerRequest;
  private page: CellPage | undefined;
  private index = 0;
  /** The continue token the current page was fetched with (none: the first page), for the next cursor. */
  private pageContinue: string | undefined;
  private start: { rv?: string; rvMatch?: string; cursor?: CellCursor };

  constructor(request: PagerRequest, start: { rv?: string; rvMatch?: string; cursor?: CellCursor }) {
    this.request = request;
    this.cell = request.cell;
    this.start = start;
    this.pageContinue = start.cursor?.continue;
  }

  /** The first page's answer (kind, version, columns); fetches it if needed. */
  async first(): Promise<CellPage> {
    if (!this.page) await this.fetch();
    return this.page!;
  }

  /** The next item without taking it; undefined at the end of the cell's list. */
  async peek(): Promise<unknown> {
    if (!this.page) await this.fetch();
    while (this.index >= this.page!.items.length) {
      if (!this.page!.continue) return undefined;
      this.pageContinue = this.page!.continue;
      await this.fetch();
    }
    return this.page!.items[this.index];
  }

  take(): void {
    this.index += 1;
  }

  /** Where to pick up in this cell for the client's next page. */
  cursor(): CellCursor {
    const rv = this.page!.resourceVersion;
    if (this.index >= this.page!.items.length && !this.page!.continue) return { rv, skip: 0, done: true };
    if (this.index >= this.page!.items.length) return { rv, continue: this.page!.continue!, skip: 0 };
    return { rv, ...(this.pageContinue ? { continue: this.pageContinue } : {}), skip: this.index };
  }

  private async fetch(): Promise<void> {
    const { client, cell, path, query, headers, pageSize, signal } = this.request;
    const params = new URLSearchParams(query);
    params.set('limit', String(pageSize));
    const cursor = this.start.cursor;
    let skip = 0;
    if (this.pageContinue) {
      params.set('continue', this.pageContinue);
    } else if (cursor) {
      // The first page again, exactly as it was: same snapshot, then skip what was given.
      params.set('resourceVersion', cursor.rv);
      params.set('resourceVersionMatch', 'Exact');
    } else if (this.start.rv !== undefined) {
      params.set('resourceVersion', this.start.rv);
      if (this.start.rvMatch) params.set('resourceVersionMatch', this.start.rvMatch);
    }
    if (this.page === undefined && cursor) skip = cursor.skip;
    const response = await client.raw('GET', `${path}?${params}`, { headers, signal });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new CellListError(cell, response.statusCode, text);
    const body = JSON.parse(text) as {
      kind: string;
      apiVersion: string;
      metadata?: { resourceVersion?: string; continue?: string };
      items?: unknown[];
      rows?: unknown[];
      columnDefinitions?: unknown[];
    };
    const items = body.kind === 'Table' ? (body.rows ?? []) : (body.items ?? []);
    this.page = {
      kind: body.kind,
      apiVersion: body.apiVersion,
      resourceVersion: body.metadata?.resourceVersion ?? '',
      continue: body.metadata?.continue || undefined,
      items,
      ...(body.columnDefinitions ? { columnDefinitions: body.columnDefinitions } : {}),
    };
    this.index = skip;
    // Once the first page is in, a resumed cursor has done its job.
    this.start = {};
  }
}

/** The metadata of a list item or a Table row (whose `object` is PartialObjectMetadata by default). */
export function itemMeta(item: unknown, table: boolean): ItemMeta {
  const object = (table ? (item as { object?: unknown }).object : item) as
    { metadata?: ItemMeta } | undefined;
  return object?.metadata ?? {};
}
