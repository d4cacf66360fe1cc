/** `pathAndQuery` with the query parameter `name` set to `value`, or removed when `value` is undefined. */
export function withQuery(pathAndQuery: string, name: string, value: string | undefined): string {
  const url = new URL(pathAndQuery, 'http://router.invalid');
  if (value === undefined) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

/**
 * A query as kube-apiserver reads it (Go's `net/url` ParseQuery): pairs split on `&` only; a pair holding a
 * `;` or an escape Go cannot decode is dropped; `+` is a space. URLSearchParams keeps both, so the router
 * would decide on a parameter the apiserver never sees (`?dryRun=All;` is no dry run to it).
 */
export function goQueryParams(query: string): URLSearchParams {
  const params = new URLSearchParams();
  for (const pair of query.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const equals = pair.indexOf('=');
    const key = goUnescape(equals < 0 ? pair : pair.slice(0, equals));
    const value = goUnescape(equals < 0 ? '' : pair.slice(equals + 1));
    if (key !== undefined && value !== undefined) params.append(key, value);
  }
  return params;
}

/** Whether a request target asks for a dry run, as the apiserver reads its query. */
export function isDryRun(target: string): boolean {
  const query = target.indexOf('?');
  return query >= 0 && goQueryParams(target.slice(query + 1)).has('dryRun');
}

/** Go's QueryUnescape: `+` a space, `%XX` a byte; undefined for a `%` without two hex digits. */
function goUnescape(text: string): string | undefined {
  if (/%(?![0-9a-fA-F]{2})/.test(text)) return undefined;
  const bytes = Buffer.from(text.replaceAll('+', ' '), 'latin1');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x25) {
      out.push(Number.parseInt(bytes.subarray(i + 1, i + 3).toString('latin1'), 16));
      i += 2;
    } else out.push(bytes[i]!);
  }
  return Buffer.from(out).toString('utf8');
}
