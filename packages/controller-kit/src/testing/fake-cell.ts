import { APPLY_PATCH, type KubeList, type KubeObject, type ObjectMeta } from '@cellfed/federation';

import { ApiError } from '../kube/api-error.ts';
import type { RequestOptions } from '../kube/kube-client.ts';

type Hook = (method: string, path: string, body: unknown) => void;

/**
 * An in-memory apiserver for the requests controllers make (unit tests only; e2e uses real cells): GET (a
 * collection lists what is under it, narrowed by a `labelSelector` of `key=value`, `key in (…)`, `key` and `!key`
 * terms), POST (every field to the creating manager), PUT (also `/status`), JSON merge PATCH with the
 * resourceVersion precondition, server-side apply (the applied object replaces the stored one, or creates
 * it: one field manager), DELETE with a uid precondition, and discovery of `deployments/status`. `before`
 * runs ahead of every write and may throw (a crash at that step) or change the store (another writer).
 */
export class FakeCell {
  readonly objects = new Map<string, KubeObject>();
  readonly writes: { method: string; path: string }[] = [];
  readonly reads: string[] = [];
  /** The `resourceVersion` each read asked for (none: the latest, a quorum read), in the order of `reads`. */
  readonly readVersions: (string | undefined)[] = [];
  before: Hook | undefined;
  private version = 100;
  private uids = 0;
  readonly id: string;

  constructor(id: string) {
    this.id = id;
  }

  /** Puts an object straight into the store (as a user or the cell's own controllers would). */
  put(path: string, object: KubeObject): KubeObject {
    const existing = this.objects.get(path);
    const stored = structuredClone(object);
    stored.metadata.uid = existing?.metadata.uid ?? object.metadata.uid ?? `${this.id}-uid-${++this.uids}`;
    // As an apiserver does for objects with a spec: a new generation with each change of it (of a
    // Deployment's annotations too, as kube-apiserver counts them).
    const deployment = path.includes('/deployments/');
    const spec = (candidate: KubeObject | undefined) =>
      JSON.stringify([
        (candidate as { spec?: unknown })?.spec,
        deployment ? (candidate?.metadata.annotations ?? {}) : undefined,
      ]);
    if ((object as { spec?: unknown }).spec !== undefined)
      stored.metadata.generation =
        existing && spec(existing) === spec(object)
          ? existing.metadata.generation
          : (existing?.metadata.generation ?? 0) + 1;
    stored.metadata.resourceVersion = String(++this.version);
    this.objects.set(path, stored);
    return structuredClone(stored);
  }

  get(path: string): KubeObject | undefined {
    const object = this.objects.get(path);
    return object && structuredClone(object);
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    await Promise.resolve();
    const body = typeof options.body === 'string' ? JSON.parse(options.body) : options.body;
    if (method === 'GET') {
      this.reads.push(path);
      this.readVersions.push(options.query?.resourceVersion as string | undefined);
      return (isCollection(path) ? this.list(path, options.query?.labelSelector) : this.read(path)) as T;
    }
    this.before?.(method, path, body);
    this.writes.push({ method, path });
    if (method === 'POST')
      return this.create(path, body as KubeObject, options.query?.fieldManager as string | undefined) as T;
    if (method === 'PUT') return this.replace(path, body as KubeObject) as T;
    if (method === 'PATCH' && options.contentType === APPLY_PATCH)
      return this.apply(path, body as KubeObject) as T;
    if (method === 'PATCH') return this.patch(path, body as KubeObject) as T;
    if (method === 'DELETE')
      return this.remove(path, body as { preconditions?: { uid?: string; resourceVersion?: string } }) as T;
    throw new Error(`fake cell: ${method} not supported`);
  }

  private read(path: string): unknown {
    if (path === '/apis/apps/v1')
      return { resources: [{ name: 'deployments' }, { name: 'deployments/status' }] };
    if (path === '/api/v1')
      return { resources: [{ name: 'configmaps' }, { name: 'services' }, { name: 'services/status' }] };
    const object = this.objects.get(path);
    if (!object) throw notFound(path);
    return structuredClone(object);
  }

  private list(collection: string, selector: unknown): KubeList {
    // Commas inside `in (a,b)` do not end a term.
    const terms = typeof selector === 'string' && selector ? selector.split(/,(?![^(]*\))/) : [];
    const items = [...this.objects.entries()]
      .filter(
        ([path]) => path.startsWith(`${collection}/`) && !path.slice(collection.length + 1).includes('/'),
      )
      .map(([, object]) => object)
      .filter((object) => terms.every((term) => matchesTerm(object.metadata.labels ?? {}, term)));
    return { metadata: { resourceVersion: String(this.version) }, items: structuredClone(items) };
  }

  private create(collection: string, object: KubeObject, fieldManager = 'unknown'): KubeObject {
    const path = `${collection}/${object.metadata.name}`;
    if (this.objects.has(path))
      throw new ApiError(409, { reason: 'AlreadyExists', code: 409 }, `POST ${path}`);
    const { status: _dropped, ...rest } = object as KubeObject & { status?: unknown };
    const { uid: _uid, resourceVersion: _version, managedFields: _given, ...given } = rest.metadata;
    // As an apiserver: a create gives every field to the creating manager, whatever managers it names.
    const metadata: ObjectMeta = {
      ...given,
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{ manager: fieldManager, operation: 'Update' }],
    };
    return this.put(path, { ...rest, metadata } as KubeObject);
  }

  private replace(path: string, object: KubeObject): KubeObject {
    const status = path.endsWith('/status');
    const target = status ? path.slice(0, -'/status'.length) : path;
    const existing = this.objects.get(target);
    if (!existing) throw notFound(target);
    this.checkVersion(target, existing, object.metadata.resourceVersion);
    const frozen = (existing as { immutable?: boolean }).immutable === true;
    if (
      frozen &&
      JSON.stringify((existing as { data?: unknown }).data) !==
        JSON.stringify((object as { data?: unknown }).data)
    )
      throw new ApiError(422, { reason: 'Invalid', code: 422 }, `PUT ${target}: field is immutable`);
    const next = status
      ? { ...existing, status: (object as { status?: unknown }).status }
      : { ...object, status: (existing as { status?: unknown }).status };
    return this.put(target, next as KubeObject);
  }

  private patch(path: string, patch: KubeObject): KubeObject {
    const existing = this.objects.get(path);
    if (!existing) throw notFound(path);
    this.checkVersion(path, existing, patch.metadata?.resourceVersion);
    return this.put(path, mergePatch(existing, patch) as KubeObject);
  }

  private apply(path: string, object: KubeObject): KubeObject {
    const existing = this.objects.get(path);
    const metadata: ObjectMeta = {
      ...object.metadata,
      creationTimestamp: existing?.metadata.creationTimestamp ?? '2026-01-01T00:00:00Z',
    };
    return this.put(path, { ...object, metadata });
  }

  private remove(
    path: string,
    options: { preconditions?: { uid?: string; resourceVersion?: string } } | undefined,
  ): unknown {
    const existing = this.objects.get(path);
    if (!existing) throw notFound(path);
    const uid = options?.preconditions?.uid;
    if (uid !== undefined && uid !== existing.metadata.uid)
      throw new ApiError(409, { reason: 'Conflict', code: 409 }, `DELETE ${path}: uid precondition`);
    this.checkVersion(path, existing, options?.preconditions?.resourceVersion);
    this.objects.delete(path);
    return { kind: 'Status', status: 'Success' };
  }

  private checkVersion(path: string, existing: KubeObject, wanted: string | undefined): void {
    if (wanted !== undefined && wanted !== existing.metadata.resourceVersion)
      throw new ApiError(
        409,
        { reason: 'Conflict', code: 409 },
        `write ${path}: the object has been modified`,
      );
  }
}

/** RFC 7386. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const base = target && typeof target === 'object' && !Array.isArray(target) ? target : {};
  const removed = new Set(
    Object.entries(patch)
      .filter(([, value]) => value === null)
      .map(([key]) => key),
  );
  return Object.fromEntries([
    ...Object.entries(base).filter(([key]) => !removed.has(key) && !(key in patch)),
    ...Object.entries(patch)
      .filter(([key]) => !removed.has(key))
      .map(([key, value]) => [key, mergePatch((base as Record<string, unknown>)[key], value)]),
  ]);
}

/** `/api/v1/nodes`, `/apis/apps/v1/namespaces/shop/deployments`: a resource, alone or in a namespace. */
function isCollection(path: string): boolean {
  const segments = path.split('/').filter(Boolean);
  const afterVersion = segments.slice(segments[0] === 'api' ? 2 : 3);
  return afterVersion.length === 1 || (afterVersion.length === 3 && afterVersion[0] === 'namespaces');
}

function notFound(path: string): ApiError {
  return new ApiError(404, { reason: 'NotFound', code: 404 }, `GET ${path}`);
}

/** One term of a label selector: `key=value`, `key in (a,b)`, `key` (has it) or `!key` (has it not). */
function matchesTerm(labels: Record<string, string>, term: string): boolean {
  if (term.startsWith('!')) return labels[term.slice(1)] === undefined;
  const within = /^(\S+) in \(([^)]*)\)$/.exec(term);
  if (within) return within[2]!.split(',').includes(labels[within[1]!] ?? '\0');
  const [key = '', value] = term.split('=');
  return value === undefined ? labels[key] !== undefined : labels[key] === value;
}
