import { CellListError } from '../errors.ts';
import { cellListError, itemMeta, type PagerRequest } from './cell-pager.ts';
import type { CellPage, ListFields } from './item-source.ts';
import type { CellCursor } from './cell-versions.ts';
import type { ItemSource } from './item-source.ts';
import { JsonListSplitter } from './json-list-splitter.ts';
import { itemWithMetadataOnly } from './item-metadata.ts';

/** What a stream asks a cell: a pager's request without the paging. */
type StreamRequest = Omit<PagerRequest, 'pageSize' | 'prefetch' | 'protobuf'>;

/**
 * A cell's whole JSON list, asked for unpaged and read as it arrives (JsonListSplitter): the merge holds
 * each cell's next item and the chunk it is in, never the cell's answer, and writes while the cells still
 * send. Memory is a few chunks per cell whatever the list's size; the cells serve one request each.
 */
export class CellStream implements ItemSource {
  readonly cell: string;
  private readonly request: StreamRequest;
  private readonly start: { rv?: string; rvMatch?: string };
  private readonly splitter = new JsonListSplitter('items');
  private items: Buffer[] = [];
  private index = 0;
  private chunks: AsyncIterator<Uint8Array> | undefined;
  private ended = false;
  /** The head's metadata, parsed once (the rest is passed on as the cell wrote it). */
  private parsed: { item: unknown; key: string | undefined } | undefined;
  private page: CellPage | undefined;
  /** The list's fields, all of them (read at its end). */
  private tailFields: ListFields | undefined;

  constructor(request: StreamRequest, start: { rv?: string; rvMatch?: string }) {
    this.request = request;
    this.cell = request.cell;
    this.start = start;
  }

  async first(): Promise<CellPage> {
    if (this.page) return this.page;
    const { client, cell, path, query, headers, signal } = this.request;
    const params = new URLSearchParams(query);
    if (this.start.rv !== undefined) {
      params.set('resourceVersion', this.start.rv);
      if (this.start.rvMatch) params.set('resourceVersionMatch', this.start.rvMatch);
    }
    const response = await client.raw('GET', `${path}?${params}`, { headers, signal });
    if (response.statusCode !== 200) throw await cellListError(cell, response);
    this.chunks = response.body[Symbol.asyncIterator]();
    while (!this.splitter.head && !this.ended) await this.pull();
    this.page = { ...listFields(this.splitter.head ?? {}), continue: undefined, items: [] };
    return this.page;
  }

  /** The list's kind and resourceVersion: known once it has ended where they follow the items. */
  listFields(): ListFields {
    return this.tailFields ?? this.page!;
  }

  ready(): boolean {
    return this.index < this.items.length || this.ended;
  }

  async peek(): Promise<unknown> {
    if (!this.page) await this.first();
    while (!this.ready()) await this.pull();
    return this.head();
  }

  head(): unknown {
    return this.parse()?.item;
  }

  headJson(): Buffer {
    return this.items[this.index]!;
  }

  headKey(): string {
    const parsed = this.parse()!;
    if (parsed.key === undefined) {
      const meta = itemMeta(parsed.item, false);
      parsed.key = `${meta.namespace ?? ''}/${meta.name ?? ''}`;
    }
    return parsed.key;
  }

  take(): void {
    this.index += 1;
    this.parsed = undefined;
    if (this.index === this.items.length) {
      this.items = [];
      this.index = 0;
    }
  }

  hasMore(): boolean {
    return !this.ended || this.index < this.items.length;
  }

  cursor(): CellCursor {
    throw new Error('a streamed list is whole: it has no cursor');
  }

  private parse(): { item: unknown; key: string | undefined } | undefined {
    const bytes = this.items[this.index];
    if (bytes === undefined) return undefined;
    this.parsed ??= { item: itemWithMetadataOnly(bytes), key: undefined };
    return this.parsed;
  }

  private async pull(): Promise<void> {
    const next = await this.chunks!.next();
    if (next.done) {
      if (!this.splitter.done)
        throw new CellListError(this.cell, 502, `cell ${this.cell} ended its list before its last item`);
      this.ended = true;
      return;
    }
    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    for (const item of this.splitter.push(chunk)) this.items.push(item);
    // The rest of the body: the list's end, and its kind and metadata where they follow the items.
    if (this.splitter.done) {
      for (;;) {
        const rest = await this.chunks!.next();
        if (rest.done) break;
        this.splitter.push(Buffer.from(rest.value.buffer, rest.value.byteOffset, rest.value.byteLength));
      }
      this.ended = true;
      this.tailFields = listFields(this.splitter.allFields() ?? {});
    }
  }
}

/** A list's kind, version and resourceVersion from its fields (as far as they are known). */
function listFields(fields: Readonly<Record<string, unknown>>): ListFields {
  const { kind, apiVersion, metadata } = fields as {
    kind?: string;
    apiVersion?: string;
    metadata?: { resourceVersion?: string };
  };
  return {
    kind: kind ?? 'List',
    apiVersion: apiVersion ?? 'v1',
    resourceVersion: metadata?.resourceVersion ?? '',
  };
}
