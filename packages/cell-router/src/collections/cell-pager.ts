import { continueAfter, tokenShape, type TokenShape } from './cell-continue.ts';
import type { CellCursor } from './cell-versions.ts';
import { arrayElements, arrayStart } from './json-elements.ts';
import { itemWithMetadataOnly } from './item-metadata.ts';
import { JsonListSplitter } from './json-list-splitter.ts';
import { isProtobuf, parseProtobufList, protobufStatusJson } from './protobuf-list.ts';
import { CellListError } from '../errors.ts';
import type { CellPage, ItemMeta, ItemSource, ListFields } from './item-source.ts';

/** What the pager needs of a cell's client (KubeClient.raw): one GET, its status and body text. */
export interface CellLister {
  raw(
    method: 'GET',
    target: string,
    options: { headers: Record<string, string | string[]>; signal: AbortSignal },
  ): Promise<{
    statusCode: number;
    /** undici's body: read whole (a page), or chunk by chunk (a streamed list). */
    body: AsyncIterable<Uint8Array> & { arrayBuffer(): Promise<ArrayBuffer> };
  }>;
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
  /** Ask for the next page as soon as one arrives (a whole list: every page will be read). */
  readonly prefetch?: boolean;
  /** The pages come in protobuf (the headers ask for it). */
  readonly protobuf?: boolean;
  readonly signal: AbortSignal;
}

/**
 * A cell's list read page by page, from where a cursor says (or from the start), as a stream of items in
 * the apiserver's order (by namespace, then name) for the merge: `ready` says whether `head` can answer
 * without waiting, `peek` waits for it. The first page pins the cell's resourceVersion; later pages follow
 * the cell's own continue tokens.
 */
export class CellPager implements ItemSource {
  readonly cell: string;
  private readonly request: PagerRequest;
  private page: CellPage | undefined;
  private index = 0;
  private headKeyCache: { index: number; key: string } | undefined;
  /** The continue token the current page was fetched with (none: the first page), for the next cursor. */
  private pageContinue: string | undefined;
  private upcoming: Promise<CellPage> | undefined;
  /** How this cell's continue tokens for this snapshot are built, once a page has shown one. */
  private shape: TokenShape | undefined;
  private start: { rv?: string; rvMatch?: string; cursor?: CellCursor };
  /** The first page's kind, version and resourceVersion (the snapshot's). */
  private firstFields: ListFields | undefined;

  constructor(request: PagerRequest, start: { rv?: string; rvMatch?: string; cursor?: CellCursor }) {
    this.request = request;
    this.cell = request.cell;
    this.start = start;
    this.pageContinue = start.cursor?.continue;
  }

  /** The first page's answer (kind, version, columns); fetches it if needed. */
  async first(): Promise<CellPage> {
    if (!this.page) await this.fetchFirst();
    return this.page!;
  }

  /** The list's fields, as its first page gave them (a page says them whole, wherever they are). */
  listFields(): ListFields {
    return this.firstFields ?? this.page!;
  }

  /** Whether `head` answers now: an item of the page is in, or the cell's list has ended. */
  ready(): boolean {
    return this.page !== undefined && (this.index < this.page.items.length || !this.page.continue);
  }

  /** The next item (undefined at the end of the cell's list); only when `ready`. */
  head(): unknown {
    return this.page!.items[this.index];
  }

  /** The head as JSON to pass on: the cell's own bytes when the page kept them. */
  headJson(): Buffer | string {
    return this.page!.raw?.[this.index] ?? JSON.stringify(this.head());
  }

  /** The head's `namespace/name`, the merge's order; only when `ready` and not at the end. */
  headKey(table: boolean): string {
    if (this.headKeyCache?.index !== this.index) {
      const meta = itemMeta(this.head(), table);
      this.headKeyCache = { index: this.index, key: `${meta.namespace ?? ''}/${meta.name ?? ''}` };
    }
    return this.headKeyCache.key;
  }

  /** The next item without taking it, fetching pages as needed; undefined at the end of the cell's list. */
  async peek(): Promise<unknown> {
    if (!this.page) await this.fetchFirst();
    while (!this.ready()) {
      const next = this.upcoming ?? this.fetchPage(this.page!.continue!);
      this.upcoming = undefined;
      this.pageContinue = this.page!.continue;
      this.install(await next, 0);
    }
    return this.head();
  }

  /** Whether items may follow: one is in, or the cell gave a continue token. */
  hasMore(): boolean {
    return (
      this.page !== undefined && (this.index < this.page.items.length || this.page.continue !== undefined)
    );
  }

  take(): void {
    this.index += 1;
  }

  /** Where to pick up in this cell for the client's next page. */
  cursor(): CellCursor {
    const page = this.page!;
    const rv = page.resourceVersion;
    if (this.index >= page.items.length && !page.continue) return { rv, skip: 0, done: true };
    if (this.index >= page.items.length) return { rv, continue: page.continue!, skip: 0 };
    if (this.index > 0 && this.shape) {
      // Right after the last item given, so the next page reads nothing twice.
      const minted = continueAfter(this.shape, itemMeta(page.items[this.index - 1], page.kind === 'Table'));
      if (minted) return { rv, continue: minted, skip: 0 };
    }
    return { rv, ...(this.pageContinue ? { continue: this.pageContinue } : {}), skip: this.index };
  }

  private async fetchFirst(): Promise<void> {
    const params = new URLSearchParams();
    const cursor = this.start.cursor;
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
    const page = await this.fetch(params);
    this.firstFields = {
      kind: page.kind,
      apiVersion: page.apiVersion,
      resourceVersion: page.resourceVersion,
    };
    this.install(page, cursor?.skip ?? 0);
    // Once the first page is in, a resumed cursor has done its job.
    this.start = {};
  }

  private fetchPage(continueToken: string): Promise<CellPage> {
    return this.fetch(new URLSearchParams({ continue: continueToken }));
  }

  private install(page: CellPage, skip: number): void {
    this.page = page;
    this.index = skip;
    this.headKeyCache = undefined;
    if (page.continue && page.items.length > 0)
      this.shape ??= tokenShape(page.continue, itemMeta(page.items.at(-1), page.kind === 'Table'));
    if (this.request.prefetch && page.continue) {
      this.upcoming = this.fetchPage(page.continue);
      // Awaited by `peek` unless the list stops first (client gone): never an unhandled rejection.
      this.upcoming.catch(() => undefined);
    }
  }

  private async fetch(control: URLSearchParams): Promise<CellPage> {
    const { client, cell, path, query, headers, pageSize, signal } = this.request;
    const params = new URLSearchParams(query);
    params.set('limit', String(pageSize));
    for (const [name, value] of control) params.set(name, value);
    const response = await client.raw('GET', `${path}?${params}`, { headers, signal });
    if (response.statusCode !== 200) throw await cellListError(cell, response);
    const bytes = Buffer.from(await response.body.arrayBuffer());
    if (this.request.protobuf) return parseProtobufList(bytes);
    return jsonListPage(bytes) ?? parsedPage(bytes);
  }
}

const ITEMS = Buffer.from('"items"');
const OPEN_BRACE = 0x7b;

/**
 * A JSON list's page read by its bytes: the list's own fields parsed, each item only for its metadata
 * (item-metadata.ts) and kept as the cell wrote it. Undefined for a Table, or what is not a list.
 */
function jsonListPage(bytes: Buffer): CellPage | undefined {
  // A Table, an empty list whose items Go wrote as null, or no list at all: parsed whole.
  const start = arrayStart(bytes, ITEMS);
  if (start === undefined || start === 'whole') return undefined;
  const splitter = new JsonListSplitter('items');
  let raw: Buffer[];
  try {
    raw = splitter.push(bytes);
  } catch {
    return undefined;
  }
  // Its fields before and after the items (a custom resource list's come after).
  const head = (splitter.done ? splitter.allFields() : undefined) as
    | { kind?: string; apiVersion?: string; metadata?: { resourceVersion?: string; continue?: string } }
    | undefined;
  if (!head || typeof head.kind !== 'string' || head.kind === 'Table') return undefined;
  // Items that are not objects (no apiserver writes them) are left to the whole parse.
  if (raw.some((item) => item[0] !== OPEN_BRACE)) return undefined;
  return {
    kind: head.kind,
    apiVersion: head.apiVersion ?? 'v1',
    resourceVersion: head.metadata?.resourceVersion ?? '',
    continue: head.metadata?.continue || undefined,
    items: raw.map(itemWithMetadataOnly),
    raw,
  };
}

/** A page parsed whole (a Table: its rows are small, and their columns are read). */
function parsedPage(bytes: Buffer): CellPage {
  const text = bytes.toString('utf8');
  const body = JSON.parse(text) as {
    kind: string;
    apiVersion: string;
    metadata?: { resourceVersion?: string; continue?: string };
    items?: unknown[];
    rows?: unknown[];
    columnDefinitions?: unknown[];
  };
  const table = body.kind === 'Table';
  const items = (table ? body.rows : body.items) ?? [];
  const ranges = arrayElements(bytes, table ? 'rows' : 'items');
  return {
    kind: body.kind,
    apiVersion: body.apiVersion,
    resourceVersion: body.metadata?.resourceVersion ?? '',
    continue: body.metadata?.continue || undefined,
    items,
    ...(ranges?.length === items.length
      ? { raw: ranges.map(([start, end]) => bytes.subarray(start, end)) }
      : {}),
    ...(body.columnDefinitions ? { columnDefinitions: body.columnDefinitions } : {}),
  };
}

/** A cell's refusal of a list, with its Status (JSON, or read out of protobuf). */
export async function cellListError(
  cell: string,
  response: Awaited<ReturnType<CellLister['raw']>>,
): Promise<CellListError> {
  const bytes = Buffer.from(await response.body.arrayBuffer());
  return new CellListError(
    cell,
    response.statusCode,
    isProtobuf(bytes) ? protobufStatusJson(bytes) : bytes.toString('utf8'),
  );
}

/** The metadata of a list item or a Table row (whose `object` is PartialObjectMetadata by default). */
export function itemMeta(item: unknown, table: boolean): ItemMeta {
  const object = (table ? (item as { object?: unknown }).object : item) as
    { metadata?: ItemMeta } | undefined;
  return object?.metadata ?? {};
}
