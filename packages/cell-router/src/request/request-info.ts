import { queryBool } from './query-bool.ts';
import { goQueryParams } from './query-param.ts';

/**
 * What a request is about, parsed from its method, path and query alone, the way kube-apiserver's
 * RequestInfoFactory does it (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go), so the router and
 * every apiserver behind it agree on the verb, the resource and the object.
 */
export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

interface NonResourceRequestInfo {
  readonly isResourceRequest: false;
  /** `/version`, `/openapi/v3`, `/apis/apps/v1` (discovery), … */
  readonly path: string;
  /** The lowercased HTTP method: `get`, `post`, … */
  readonly verb: string;
}

type ResourceVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'proxy';

export interface ResourceRequestInfo {
  readonly isResourceRequest: true;
  readonly path: string;
  readonly verb: ResourceVerb;
  /** `api` (the core group) or `apis`. */
  readonly apiPrefix: 'api' | 'apis';
  /** Empty for the core group. */
  readonly apiGroup: string;
  readonly apiVersion: string;
  /** Empty for cluster-scoped requests (and lists across namespaces). */
  readonly namespace: string;
  readonly resource: string;
  /** `status`, `scale`, `exec`, … or empty. */
  readonly subresource: string;
  /** Empty for collections; for a list or watch, taken from a `metadata.name=` field selector as kube does. */
  readonly name: string;
  /** The `resourceVersion` query, when the request has one. */
  readonly resourceVersion?: string;
}

const SPECIAL_VERBS = new Set(['proxy', 'watch']);
/** Subresources of a Namespace object itself: `/api/v1/namespaces/x/status` is about Namespace x. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const METHOD_VERBS: Record<string, ResourceVerb> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** Parses a request target (`/apis/apps/v1/namespaces/x/deployments/y?watch=1`) with its HTTP method. */
export function parseRequestInfo(method: string, target: string): RequestInfo {
  const [rawPath = '', query = ''] = splitTarget(target);
  // The path as Go's server hands it to kube-apiserver: escapes decoded (`%2F` is a slash), nothing else
  // changed (no `..` resolved). A WHATWG URL would resolve dot segments and keep `%2F`, and the router
  // would then route a path the apiserver reads as another object.
  const path = unescapePath(rawPath);
  const searchParams = goQueryParams(query);
  const nonResource = (): NonResourceRequestInfo => ({
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
  });
  let parts = splitPath(path);
  if (parts.length < 3) return nonResource();
  const apiPrefix = parts[0];
  if (apiPrefix !== 'api' && apiPrefix !== 'apis') return nonResource();
  parts = parts.slice(1);
  let apiGroup = '';
  if (apiPrefix === 'apis') {
    // /apis/apps/v1 is discovery; a resource needs a group, a version and at least a resource.
    if (parts.length < 3) return nonResource();
    apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  const apiVersion = parts[0]!;
  parts = parts.slice(1);

  let verb: ResourceVerb | undefined;
  if (SPECIAL_VERBS.has(parts[0]!)) {
    // /api/v1/watch/… and /api/v1/proxy/…: the deprecated path forms of watch and proxy. Without a resource
    // kube-apiserver cannot place them either (and answers 500): a caller's error, refused as one.
    if (parts.length < 2) throw new Error(`unable to determine kind and namespace from ${path}`);
    verb = parts[0] as ResourceVerb;
    parts = parts.slice(1);
  } else {
    verb = METHOD_VERBS[method.toUpperCase()];
    if (!verb) return nonResource();
  }

  let namespace = '';
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1]!;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
    }
  }

  const resource = parts[0] ?? '';
  let name = parts.length >= 2 ? parts[1]! : '';
  const subresource = parts.length >= 3 && verb !== 'proxy' ? parts[2]! : '';

  if (name === '' && verb === 'get') {
    verb = queryBool(searchParams.get('watch')) ? 'watch' : 'list';
    name = nameFromFieldSelector(searchParams.get('fieldSelector')) ?? '';
  } else if (name === '' && verb === 'delete') {
    verb = 'deletecollection';
  }
  const resourceVersion = searchParams.get('resourceVersion');

  return {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name,
    ...(resourceVersion === null ? {} : { resourceVersion }),
  };
}

/** The path and the query of a request target (a `#` is part of the path, as Go reads a request URI). */
function splitTarget(target: string): [string, string] {
  const question = target.indexOf('?');
  return question < 0 ? [target, ''] : [target.slice(0, question), target.slice(question + 1)];
}

/**
 * Go's url.PathUnescape: every `%XX` decoded. A `%` that does not start an escape fails, as it fails in Go's
 * server (which then closes the connection without reading the body): refused here, the caller gets a Status.
 */
function unescapePath(rawPath: string): string {
  if (/%(?![0-9a-fA-F]{2})/.test(rawPath))
    throw new Error(
      `the request path ${JSON.stringify(rawPath.slice(0, 200))} has a "%" that does not start an escape`,
    );
  return rawPath.replace(/(?:%[0-9a-fA-F]{2})+/g, (escapes) =>
    Buffer.from(escapes.replaceAll('%', ''), 'hex').toString('utf8'),
  );
}

/** requestinfo.go's splitPath: slashes trimmed at both ends, empty parts in between kept. */
function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? [] : trimmed.split('/');
}

/** `metadata.name=web` (alone or among other requirements) names one object, as kube treats it. */
function nameFromFieldSelector(selector: string | null): string | undefined {
  if (!selector) return undefined;
  for (const requirement of selector.split(',')) {
    const match = /^metadata\.name(==?)(.+)$/.exec(requirement.trim());
    if (match) return match[2];
  }
  return undefined;
}
