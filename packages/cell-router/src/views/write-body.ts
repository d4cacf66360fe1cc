import { load } from 'js-yaml';

import { mediaType } from '../request/object-name.ts';

/**
 * A write body decoded as the router judges it, or why it will not judge it. Where the router's reading and
 * the apiserver's could differ, the body is refused rather than read one way and applied another:
 * - JSON with a key twice in one object: JavaScript keeps the last, Go's decoder merges both into a typed
 *   object's map (`{"labels":{"cellfed.io/x":"y"},"labels":{"app":"a"}}` keeps both);
 * - YAML with a merge key (`<<`), which js-yaml keeps as a key and go-yaml merges, or with an alias (a node
 *   used twice: a few bytes of aliases can stand for billions of nodes).
 */
export type DecodedBody = { readonly value: unknown } | { readonly refused: string };

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
  const duplicate = duplicateKey(text);
  return duplicate === undefined
    ? { value }
    : { refused: `the request body has the key ${JSON.stringify(duplicate)} twice in one object` };
}

/** Why a YAML document the router will not judge is refused: an alias, or a merge key. */
function yamlRefusal(root: unknown): string | undefined {
  const seen = new WeakSet<object>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (seen.has(node)) return 'the request body uses a YAML alias; send the document without anchors';
    seen.add(node);
    if (Array.isArray(node)) stack.push(...(node as unknown[]));
    else {
      if (Object.hasOwn(node, '<<'))
        return 'the request body uses a YAML merge key (<<); send the merged map';
      stack.push(...Object.values(node));
    }
  }
  return undefined;
}

/** The first key a valid JSON text has twice in one object, if any (one pass over the text). */
export function duplicateKey(text: string): string | undefined {
  // Per open container: its keys so far (an object), or null (an array).
  const open: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c /* \ */ ? 2 : 1;
      const keys = open.at(-1);
      if (keys && expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      open.push(new Set());
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      open.push(null);
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) expectKey = open.at(-1) instanceof Set;
  }
  return undefined;
}
