import { decodeCellVersions } from '../collections/cell-versions.ts';
import { mediaType } from '../request/object-name.ts';
import { appendToNested, lengthDelimited, nestedField } from '../request/protobuf-wire.ts';
import { badRequest, failure, type KubeStatus } from '../status/kube-status.ts';
import { CellTokenError } from '../errors.ts';

const COMPOSITE_MARK = Buffer.from('cf1.');
/** ObjectMeta.resourceVersion in the protobuf envelope: Unknown.raw (2) → object.metadata (1) → 6. */
const PROTOBUF_VERSION_PATH = [2, 1, 6] as const;

/**
 * A write whose body carries a composite resourceVersion (an object from a list or watch through the
 * router, sent back for an optimistic update): the same body with the target cell's own version, which is
 * what that cell compares. Undefined when the body has no composite version (nothing to change).
 */
export function cellVersionBody(
  contentType: string | undefined,
  body: Buffer,
  cell: string,
): { body: Buffer } | { status: KubeStatus } | undefined {
  if (!body.includes(COMPOSITE_MARK)) return undefined;
  const type = mediaType(contentType);
  try {
    if (type === 'application/vnd.kubernetes.protobuf') {
      const envelope = body.subarray(4);
      const version = nestedField(envelope, PROTOBUF_VERSION_PATH)?.toString('utf8');
      const own = version ? cellVersion(version, cell) : undefined;
      if (own === undefined) return undefined;
      if (typeof own !== 'string') return own;
      const rewritten = appendToNested(
        envelope,
        PROTOBUF_VERSION_PATH.slice(0, 2),
        lengthDelimited(6, Buffer.from(own)),
      );
      return { body: Buffer.concat([body.subarray(0, 4), rewritten]) };
    }
    if (!type.includes('json') && !type.includes('yaml')) return undefined;
    const object = JSON.parse(body.toString('utf8')) as {
      metadata?: { resourceVersion?: unknown };
      preconditions?: { resourceVersion?: unknown };
    };
    let changed = false;
    for (const holder of [object.metadata, object.preconditions]) {
      if (typeof holder?.resourceVersion !== 'string') continue;
      const own = cellVersion(holder.resourceVersion, cell);
      if (own === undefined) continue;
      if (typeof own !== 'string') return own;
      holder.resourceVersion = own;
      changed = true;
    }
    return changed ? { body: Buffer.from(JSON.stringify(object)) } : undefined;
  } catch {
    // Not JSON after all (a YAML apply body): the cell answers for itself.
    return undefined;
  }
}

/**
 * A read of one object at a list's composite resourceVersion (a listed item's, or a watch event's): the
 * request target with the cell's own version in the query, which is what "not older than" means in that
 * cell. A cell the composite does not name (it joined after the list) is read at its latest, which is newer
 * than anything the list saw. Undefined when the query holds no composite (nothing to change).
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
  let versions: Map<string, string> | undefined;
  try {
    versions = decodeCellVersions(version);
  } catch (error) {
    if (error instanceof CellTokenError) return { status: badRequest(`resourceVersion: ${error.message}`) };
    throw error;
  }
  if (!versions) return undefined;
  const own = versions.get(cell);
  if (own === undefined) params.delete('resourceVersion');
  else params.set('resourceVersion', own);
  const rest = params.toString();
  return { target: target.slice(0, query) + (rest ? `?${rest}` : '') };
}

function cellVersion(version: string, cell: string): string | { status: KubeStatus } | undefined {
  let versions: Map<string, string> | undefined;
  try {
    versions = decodeCellVersions(version);
  } catch (error) {
    if (error instanceof CellTokenError) return { status: conflict() };
    throw error;
  }
  if (!versions) return undefined;
  return versions.get(cell) ?? { status: conflict() };
}

/** What kube-apiserver says when the version does not match: the client re-reads and retries. */
function conflict(): KubeStatus {
  return failure(
    409,
    'Conflict',
    'the object has been modified; please apply your changes to the latest version and try again',
  );
}
