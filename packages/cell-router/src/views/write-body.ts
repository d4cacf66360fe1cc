import { load } from 'js-yaml';

import { mediaType } from '../request/object-name.ts';

/**
 * A write body decoded as the router judges it, or why it will not judge it. Where JavaScript's reading and
 * the apiserver's differ, the body is read as the apiserver reads it, or refused:
 * - JSON with a key twice in one object: JavaScript keeps the last; Go decodes both into a typed object, so
 *   two `labels` maps end up merged. Such a body is judged as merged (the apiserver then takes it, warns, or
 *   refuses it under `fieldValidation=Strict`, as it would from any client);
 * - nesting deeper than {@link MAX_DEPTH}: refused (Go's decoder stops at 10,000; no Kubernetes object
 *   comes near this, and walking it would cost the router what the caller chose);
 * - YAML with a merge key (`<<`), which js-yaml keeps as a key and go-yaml merges, or with an alias (a node
 *   used twice: a few bytes of aliases can stand for billions of nodes): refused.
 */
export type DecodedBody = { readonly value: unknown } | { readonly refused: string };

/** How deep a write body may nest objects and arrays. */
export const MAX_DEPTH = 1_000;

export function decodeWriteBody(body: Buffer, contentType: string | undefined): DecodedBody {
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (!mediaType(contentType).includes('yaml')) return { refused: 'the request body is not valid JSON' };
    try {
      value = load(text, { json: true });
    } catch (error) {
      return { refused: `the request body is not valid YAML: ${(error as Error).message.split('\n')[0]}` };
    }
    const unsafe = yamlRefusal(value);
    return unsafe ? { refused: unsafe } : { value };
  }
  const shape = jsonShape(text);
  if (shape.depth > MAX_DEPTH) return { refused: tooDeep() };
  return shape.duplicates ? { value: parseMergingDuplicates(text) } : { value };
}

const tooDeep = () => `the request body nests deeper than ${MAX_DEPTH} levels`;

/** Why a YAML document the router will not judge is refused: an alias, a merge key, too deep. */
function yamlRefusal(root: unknown): string | undefined {
  const seen = new WeakSet<object>();
  const stack: { node: unknown; depth: number }[] = [{ node: root, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= MAX_DEPTH) return tooDeep();
    if (seen.has(node)) return 'the request body uses a YAML alias; send the document without anchors';
    seen.add(node);
    if (!Array.isArray(node) && Object.hasOwn(node, '<<'))
      return 'the request body uses a YAML merge key (<<); send the merged map';
    for (const inner of Object.values(node)) stack.push({ node: inner, depth: depth + 1 });
  }
  return undefined;
}

/** A valid JSON text's deepest nesting, and whether an object in it has a key twice (one pass). */
export function jsonShape(text: string): { depth: number; duplicates: boolean } {
  // Per open container: its keys so far (an object), or null (an array).
  const open: (Set<string> | null)[] = [];
  let depth = 0;
  let duplicates = false;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c /* \ */ ? 2 : 1;
      const keys = open.at(-1);
      if (keys && expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) duplicates = true;
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      open.push(c === 0x7b ? new Set() : null);
      depth = Math.max(depth, open.length);
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) expectKey = open.at(-1) instanceof Set;
  }
  return { depth, duplicates };
}

/**
 * A valid JSON text (no deeper than MAX_DEPTH) read as Go decodes it into a typed object: a key given twice
 * in one object decodes into the same field again, so two objects merge (a map keeps the first one's keys, a
 * struct its other fields) and anything else is replaced by the last.
 */
export function parseMergingDuplicates(text: string): unknown {
  let at = 0;
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const value = (): unknown => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      const object: Record<string, unknown> = {};
      space();
      if (text[at] === '}') {
        at++;
        return object;
      }
      for (;;) {
        space();
        const key = string();
        space();
        at++; // :
        const inner = value();
        object[key] = Object.hasOwn(object, key) ? merged(object[key], inner) : inner;
        space();
        if (text[at++] === '}') return object;
      }
    }
    if (c === '[') {
      at++;
      const array: unknown[] = [];
      space();
      if (text[at] === ']') {
        at++;
        return array;
      }
      for (;;) {
        array.push(value());
        space();
        if (text[at++] === ']') return array;
      }
    }
    if (c === '"') return string();
    const start = at;
    while (at < text.length && !',}] \t\n\r'.includes(text[at]!)) at++;
    return JSON.parse(text.slice(start, at));
  };
  const string = (): string => {
    const start = at;
    at++;
    while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  return value();
}

function merged(first: unknown, second: unknown): unknown {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(first) || !isObject(second)) return second;
  const result: Record<string, unknown> = { ...first };
  for (const [key, value] of Object.entries(second))
    result[key] = Object.hasOwn(result, key) ? merged(result[key], value) : value;
  return result;
}
