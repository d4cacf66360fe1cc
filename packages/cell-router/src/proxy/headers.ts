// Hop-by-hop headers belong to one connection (RFC 9110 §7.6.1); credentials and impersonation belong to the
// caller's connection to the router, never to the router's connection to an apiserver. Where a request
// comes from is the router's to say (the caller's own X-Forwarded-For would reach the cells' audit logs as
// its source), and front-proxy identities (X-Remote-*) are never a caller's to send. `Expect` asks the
// next hop for an interim answer the router does not relay.
const NOT_FORWARDED = new Set([
  'expect',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-proto',
  'x-real-ip',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  'content-length',
]);

/** The caller's headers as the router sends them on, plus its own (impersonation). */
export function upstreamHeaders(
  incoming: Readonly<Record<string, string | string[] | undefined>>,
  own: Record<string, string | string[]>,
  bodyLength?: number,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  const named = connectionOptions(incoming['connection']);
  for (const [name, value] of Object.entries(incoming)) {
    // HTTP/2 pseudo-headers (:method, :path, …) describe the client's stream, not the request sent on.
    if (
      value === undefined ||
      NOT_FORWARDED.has(name) ||
      named.has(name) ||
      name.startsWith('impersonate-') ||
      name.startsWith('x-remote-') ||
      name.startsWith(':')
    )
      continue;
    headers[name] = value;
  }
  if (bodyLength !== undefined) headers['content-length'] = String(bodyLength);
  return { ...headers, ...own };
}

/**
 * The headers of an apiserver's own answers that reach the caller; anything else a cell sends (a header an
 * admission webhook, a proxy or a misconfigured cell adds) stays in the router. The flow-control uids are the
 * cell's flow schema's and priority level's, as one apiserver shows its own.
 */
const ANSWER_HEADERS = new Set([
  'audit-id',
  'cache-control',
  'content-encoding',
  'content-length',
  'content-type',
  'date',
  'location',
  'retry-after',
  'strict-transport-security',
  'vary',
  'warning',
  'www-authenticate',
  'x-content-type-options',
  'x-kubernetes-pf-flowschema-uid',
  'x-kubernetes-pf-prioritylevel-uid',
]);

/** A request to a `proxy` subresource: its answer is the proxied server's, headers and all. */
const PROXY_PATH = /^\/api\/v1\/(?:namespaces\/[^/]+\/)?(?:pods|services|nodes)\/[^/]+\/proxy(?:[/?]|$)/;

/**
 * An apiserver's response headers as the router returns them: those of an apiserver's own answer, by
 * allow-list; a `proxy` subresource's answer (`requestPath`), which kube-apiserver relays as the proxied
 * server sent it, with all but the hop-by-hop ones.
 */
export function downstreamHeaders(
  incoming: Record<string, string | string[] | undefined>,
  requestPath = '',
): Record<string, string | string[]> {
  const proxied = PROXY_PATH.test(requestPath);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    if (proxied ? NOT_FORWARDED.has(name) && name !== 'content-length' : !ANSWER_HEADERS.has(name)) continue;
    headers[name] = value;
  }
  return headers;
}

/** The headers a Connection header names: hop-by-hop too (RFC 9110 §7.6.1). */
function connectionOptions(value: string | string[] | undefined): Set<string> {
  if (value === undefined) return new Set();
  return new Set(
    (Array.isArray(value) ? value : [value]).flatMap((one) =>
      one.split(',').map((option) => option.trim().toLowerCase()),
    ),
  );
}
