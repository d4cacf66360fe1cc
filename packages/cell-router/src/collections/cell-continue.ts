/**
 * Continue tokens that start a cell's list right after a given object. kube-apiserver's tokens are base64url
 * JSON `{"v":"meta.k8s.io/v1","rv":<snapshot>,"start":"<key>\u0000"}` where the key is the last object's
 * storage key below the list's prefix (e.g. `/name` for a list in one namespace, `namespace/name` across
 * namespaces). That is the apiserver's format, not an API promise, so the router never guesses it: it
 * learns the shape from a token the same cell issued for the same snapshot, checked against the object
 * that token follows, and mints nothing when the token does not have exactly that shape. The caller then
 * falls back to reading the page again and skipping what was given (correct, only slower).
 */
const TOKEN_VERSION = 'meta.k8s.io/v1';

interface ApiserverToken {
  v: string;
  rv: number;
  start: string;
}

type Key = { namespace?: string | undefined; name?: string | undefined };

/** How one cell's tokens for one snapshot are built: what precedes the key, and whether it has the namespace. */
export interface TokenShape {
  readonly rv: number;
  readonly lead: string;
  readonly withNamespace: boolean;
}

/** The shape of `issued`, a token a cell gave right after `last`; undefined when it is not one to copy. */
export function tokenShape(issued: string | undefined, last: Key): TokenShape | undefined {
  const token = issued === undefined ? undefined : decode(issued);
  if (!token || !last.name) return undefined;
  const key = token.start.slice(0, -1);
  for (const withNamespace of last.namespace ? [true, false] : [false]) {
    const tail = withNamespace ? `${last.namespace}/${last.name}` : last.name;
    const lead = key.slice(0, key.length - tail.length);
    if (key.endsWith(tail) && (lead === '' || lead.endsWith('/')))
      return { rv: token.rv, lead, withNamespace };
  }
  return undefined;
}

/** A token of `shape` that starts right after `after`. */
export function continueAfter(shape: TokenShape, after: Key): string | undefined {
  if (!after.name || (shape.withNamespace && !after.namespace)) return undefined;
  const key = shape.withNamespace ? `${after.namespace}/${after.name}` : after.name;
  const token: ApiserverToken = { v: TOKEN_VERSION, rv: shape.rv, start: `${shape.lead}${key}\u0000` };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decode(issued: string): ApiserverToken | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(issued, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const token = value as Partial<ApiserverToken> | null;
  if (
    typeof token !== 'object' ||
    token === null ||
    Object.keys(token).length !== 3 ||
    token.v !== TOKEN_VERSION ||
    !Number.isSafeInteger(token.rv) ||
    typeof token.start !== 'string' ||
    !token.start.endsWith('\u0000')
  )
    return undefined;
  return token as ApiserverToken;
}
