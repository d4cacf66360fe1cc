/**
 * A JSON list read as it arrives, for a merge that never holds a cell's whole answer: first the fields
 * before the items (kube-apiserver writes `kind`, `apiVersion` and `metadata` first), then each element of
 * the top-level `items` array as the bytes the cell wrote, one element at a time, whatever the chunking.
 */
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  arrayStart,
  isSpace,
} from './json-elements.ts';

/** A list's fields before its items are a few hundred bytes; more means it is not the list expected. */
const MAX_HEAD_BYTES = 64 * 1024;

export class JsonListSplitter {
  private readonly field: string;
  private readonly wanted: Buffer;
  private phase: 'head' | 'items' | 'after' = 'head';
  private headBytes: Buffer = Buffer.alloc(0);
  private fields: Record<string, unknown> | undefined;
  /** Nesting inside the current element (0: between elements). */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The current element's bytes from earlier chunks. */
  private parts: Buffer[] = [];
  private inElement = false;
  /** The bytes after the items array (fields a list writes after its items, as custom resources' do). */
  private tail: Buffer[] = [];
  private tailBytes = 0;

  constructor(field = 'items') {
    this.field = field;
    this.wanted = Buffer.from(JSON.stringify(field));
  }

  /** The list's fields before its items, once they have been read. */
  get head(): Readonly<Record<string, unknown>> | undefined {
    return this.fields;
  }

  /**
   * The list's fields before and after its items, once the whole document has been pushed: kube-apiserver
   * writes `kind` and `metadata` first, but apiextensions-apiserver sorts a custom resource list's keys,
   * so its `items` come before them.
   */
  allFields(): Readonly<Record<string, unknown>> | undefined {
    if (!this.fields || this.phase !== 'after') return undefined;
    let text = Buffer.concat(this.tail).toString('utf8').trimStart();
    if (text.startsWith(',')) text = text.slice(1);
    const after = text.trim() === '}' || text.trim() === '' ? {} : (JSON.parse(`{${text}`) as object);
    return { ...this.fields, ...after };
  }

  /** Whether the items array has closed: every element has been given. */
  get done(): boolean {
    return this.phase === 'after';
  }

  /** Reads `chunk`; answers the elements it completes, in order. Throws if the document is not a list. */
  push(chunk: Buffer): Buffer[] {
    const elements: Buffer[] = [];
    if (this.phase === 'after') {
      this.keepTail(chunk);
      return elements;
    }
    let rest = chunk;
    if (this.phase === 'head') {
      this.headBytes = this.headBytes.length > 0 ? Buffer.concat([this.headBytes, chunk]) : chunk;
      const start = arrayStart(this.headBytes, this.wanted);
      if (start === 'whole') {
        // The document ended before any array: an empty list whose items Go wrote as `null` (a nil slice,
        // as in an empty PartialObjectMetadataList), or none at all.
        const { [this.field]: items, ...fields } = JSON.parse(this.headBytes.toString('utf8')) as Record<
          string,
          unknown
        >;
        if (items !== null && items !== undefined)
          throw new SyntaxError(`${this.wanted.toString()} is not an array`);
        this.fields = fields;
        this.headBytes = Buffer.alloc(0);
        this.phase = 'after';
        return elements;
      }
      if (start === undefined) {
        if (this.headBytes.length > MAX_HEAD_BYTES)
          throw new SyntaxError(`no ${this.wanted.toString()} array in the first ${MAX_HEAD_BYTES} bytes`);
        return elements;
      }
      this.fields = headFields(this.headBytes.subarray(0, start.key));
      rest = this.headBytes.subarray(start.bracket + 1);
      this.headBytes = Buffer.alloc(0);
      this.phase = 'items';
    }
    if (this.phase === 'items') this.scan(rest, elements);
    return elements;
  }

  private scan(chunk: Buffer, elements: Buffer[]): void {
    let start = this.inElement ? 0 : -1;
    let depth = this.depth;
    let i = 0;
    if (this.inString) i = this.skipString(chunk, 0);
    while (i < chunk.length) {
      const byte = chunk[i]!;
      if (byte === QUOTE) {
        // Most of a list's bytes are strings: their end is found natively, not byte by byte.
        this.escaped = false;
        this.inString = true;
        i = this.skipString(chunk, i + 1);
        continue;
      }
      if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (depth === 0) {
          start = i;
          this.inElement = true;
        }
        depth += 1;
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        if (depth === 0) {
          // The items array itself closes; what follows is the list's end (fields, for some lists).
          this.phase = 'after';
          this.depth = depth;
          this.keepTail(chunk.subarray(i + 1));
          return;
        }
        depth -= 1;
        if (depth === 0) {
          const piece = chunk.subarray(start, i + 1);
          elements.push(this.parts.length > 0 ? Buffer.concat([...this.parts, piece]) : piece);
          this.parts = [];
          this.inElement = false;
          start = -1;
        }
      }
      i += 1;
    }
    this.depth = depth;
    if (this.inElement) this.parts.push(chunk.subarray(start));
  }

  private keepTail(bytes: Buffer): void {
    this.tailBytes += bytes.length;
    if (this.tailBytes > MAX_HEAD_BYTES)
      throw new SyntaxError(`more than ${MAX_HEAD_BYTES} bytes after the ${this.wanted.toString()} array`);
    if (bytes.length > 0) this.tail.push(bytes);
  }

  /**
   * Inside a string from `from`: answers where scanning goes on after its closing quote, or the chunk's
   * length when the string goes on into the next chunk. A quote is escaped when an odd number of
   * backslashes precede it; a run of them that reaches `from` counts the one carried from the last chunk.
   */
  private skipString(chunk: Buffer, from: number): number {
    let at = from;
    for (;;) {
      const quote = chunk.indexOf(QUOTE, at);
      const end = quote < 0 ? chunk.length : quote;
      let backslashes = 0;
      while (end - 1 - backslashes >= from && chunk[end - 1 - backslashes] === BACKSLASH) backslashes += 1;
      let odd = backslashes % 2 === 1;
      if (end - backslashes === from && this.escaped) odd = !odd;
      if (quote < 0) {
        // The string goes on: whether the next chunk's first byte is escaped.
        this.escaped = odd;
        return chunk.length;
      }
      if (!odd) {
        this.inString = false;
        this.escaped = false;
        return quote + 1;
      }
      at = quote + 1;
    }
  }
}

/** The fields before the items: `{…,` made a whole object again and parsed. */
function headFields(prefix: Buffer): Record<string, unknown> {
  let end = prefix.length;
  while (end > 0 && (isSpace(prefix[end - 1]!) || prefix[end - 1] === COMMA)) end -= 1;
  const text = prefix.subarray(0, end).toString('utf8');
  return JSON.parse(text === '{' ? '{}' : `${text}}`) as Record<string, unknown>;
}
