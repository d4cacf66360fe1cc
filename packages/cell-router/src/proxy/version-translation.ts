import { parseObjectVersion } from '@cellfed/api';
import { PROTOBUF } from '@cellfed/federation';

import { decodeCellVersions } from '../collections/cell-versions.ts';
import { sourceSlot } from '../collections/source-versions.ts';
import { mediaType } from '../request/object-name.ts';
import { withVersionIn } from '../views/shown-version.ts';
import { appendToNested, lengthDelimited, nestedField } from '../request/protobuf-wire.ts';
import { badRequest, failure, type KubeStatus } from '../status/kube-status.ts';
import { CellTokenError } from '../errors.ts';

const VERSION_KEY = Buffer.from('"resourceVersion"');
/** ObjectMeta.resourceVersion in the protobuf envelope: Unknown.raw (2) → object.metadata (1) → 6. */
const PROTOBUF_VERSION_PATH = [2, 1, 6] as const;

/**
 * A write whose body carries a resourceVersion clients were given (an object version's one number, or a
 * list's composite), for an optimistic update or a delete's precondition: the same body with the target
 * cell's own version, which is what that cell compares; a version of another cell (the object moved since)
 * is a conflict, as a changed object is. Undefined when the body has no version (nothing to change).
 */
export function cellVersionBody(
  contentType: string | undefined,
  body: Buffer,
  cell: string,
  /** The object written, for the Conflict kube-apiserver would answer about it. */
  about?: ConflictSubject,
): { body: Buffer } | { status: KubeStatus } | undefined {
  const type = mediaType(contentType);
  try {
    if (type === PROTOBUF) {
      const envelope = body.subarray(4);
      const version = nestedField(envelope, PROTOBUF_VERSION_PATH)?.toString('utf8');
      const own = version ? cellVersion(version, cell, about) : undefined;
      if (own === undefined) return undefined;
      if (typeof own !== 'string') return own;
      const rewritten = appendToNested(
        envelope,
        PROTOBUF_VERSION_PATH.slice(0, 2),
        lengthDelimited(6, Buffer.from(own)),
      );
      return { body: Buffer.concat([body.subarray(0, 4), rewritten]) };
    }
    // A YAML body (kubectl apply --server-side sends one) is the cell's to read: a version in it is not
    // translated, and the cell compares it as its own.
    if (!type.includes('json')) return undefined;
    if (!body.includes(VERSION_KEY)) return undefined;
    // In the bytes, so nothing else in the body is re-encoded (a custom resource's integers past 2^53
    // would not survive JSON.parse).
    const root = body.indexOf(0x7b);
    if (root < 0) return undefined;
    let refused: KubeStatus | undefined;
    let edited: Buffer | undefined;
    for (const holder of ['metadata', 'preconditions']) {
      edited =
        withVersionIn(edited ?? body, root + 1, holder, (version) => {
          const own = cellVersion(version, cell, about);
          if (own !== undefined && typeof own !== 'string') refused = own.status;
          return typeof own === 'string' ? own : undefined;
        }) ?? edited;
    }
    if (refused) return { status: refused };
    return edited ? { body: edited } : undefined;
  } catch {
    // A protobuf body that does not parse: the cell answers for itself.
    return undefined;
  }
}

/**
 * A read of one object at a version clients were given (an object version's, or a list's composite): the
 * request target with the cell's own version in the query, which is what "not older than" means in that
 * cell. A version of another cell (the object moved since), or a cell the composite does not name (it joined
 * after the list), is read at its latest, which is newer than anything the version saw. Undefined when the
 * query holds no such version (nothing to change).
 */
export function cellVersionTarget(
  target: string,
  cell: string,
): { target: string } | { status: KubeStatus } | undefined {
  const query = target.indexOf('?');
  if (query < 0) return undefined;
  const params = new URLSearchParams(target.slice(query + 1));
  const version = params.get('resourceVersion');
  if (!version) return undefined;
  let own: string | undefined | null;
  try {
    own = ownVersionOf(version, cell);
  } catch (error) {
    if (error instanceof CellTokenError) return { status: badRequest(`resourceVersion: ${error.message}`) };
    throw error;
  }
  if (own === null) return undefined;
  if (own === undefined) params.delete('resourceVersion');
  else params.set('resourceVersion', own);
  const rest = params.toString();
  return { target: target.slice(0, query) + (rest ? `?${rest}` : '') };
}

function cellVersion(
  version: string,
  cell: string,
  about: ConflictSubject | undefined,
): string | { status: KubeStatus } | undefined {
  let own: string | undefined | null;
  try {
    own = ownVersionOf(version, cell);
  } catch (error) {
    if (error instanceof CellTokenError) return { status: conflict(about) };
    throw error;
  }
  if (own === null) return undefined;
  return own ?? { status: conflict(about) };
}

/**
 * The cell's own version in a version clients were given: a list's composite (a {@link CellTokenError} when
 * it does not decode) or one object version's number. Undefined when it names another apiserver (or, a
 * composite, not this cell); null when `version` is neither (`0`, or not decimal), which is passed on as it is.
 */
function ownVersionOf(version: string, cell: string): string | undefined | null {
  const versions = decodeCellVersions(version);
  if (versions) return versions.get(cell);
  if (version === '0') return null;
  const parsed = parseObjectVersion(version);
  if (!parsed) return null;
  return parsed.slot === sourceSlot(cell) ? parsed.ownVersion : undefined;
}

/** The object a write is about: its resource (plural), group and name. */
export interface ConflictSubject {
  readonly resource: string;
  readonly group: string;
  readonly name: string;
}

const MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

/** What kube-apiserver says when the version does not match (its words and details): the client retries. */
function conflict(about: ConflictSubject | undefined): KubeStatus {
  if (!about) return failure(409, 'Conflict', MODIFIED);
  const qualified = about.group ? `${about.resource}.${about.group}` : about.resource;
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified} "${about.name}": ${MODIFIED}`,
    {
      name: about.name,
      group: about.group,
      kind: about.resource,
    },
  );
}
