import {
  APPLY_PATCH,
  JSON_PATCH,
  MERGE_PATCH,
  METADATA_LIST,
  PROTOBUF,
  PROTOBUF_WATCH_STREAM,
  STRATEGIC_MERGE_PATCH,
} from '@cellfed/federation';
// Hostile requests for the router fuzz (proof campaign): seeded, so a failing request can be made again.

/** A small seeded PRNG (mulberry32): the same seed gives the same requests on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Who the admin's fuzzed requests act as: a user no RBAC rule names. */
const FUZZ_USER = 'cellfed-fuzzer';

export interface FuzzRequest {
  /**
   * Which identity sends it: the admin's client certificate (impersonating a user without rights), none at
   * all, or a made-up bearer token.
   */
  as: 'admin' | 'anonymous' | 'bad-token';
  method: string;
  path: string;
  /** A header given several values is sent as several lines. */
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

const SEGMENTS = [
  'api',
  'apis',
  'v1',
  'v1beta1',
  'apps',
  'batch',
  'cells.cellfed.io',
  'v1alpha1',
  'namespaces',
  'default',
  'kube-system',
  'deployments',
  'configmaps',
  'services',
  'pods',
  'secrets',
  'cellsets',
  'cellbackups',
  'status',
  'scale',
  'exec',
  'log',
  'proxy',
  'watch',
  'eviction',
  '..',
  '.',
  '%2e%2e',
  '%00',
  '%zz',
  '%',
  '',
  '*',
  'ÜNICODE',
  '%F0%9F%92%A5',
  'UPPER',
  'a.b.c',
  '-leading',
  'x'.repeat(300),
  '~',
  ';',
  'a%2Fb',
  '?',
  '#',
];
const QUERIES = [
  'watch=maybe',
  'watch=1',
  'limit=-1',
  'limit=99999999999999999999',
  'continue=garbage',
  'continue=',
  'labelSelector=%%%',
  'labelSelector=app%3D',
  'fieldSelector=metadata.name==x',
  'fieldSelector=spec.bogus=1',
  'resourceVersion=abc',
  'resourceVersion=-5',
  'resourceVersionMatch=Never',
  'timeoutSeconds=99999999999',
  'timeoutSeconds=-1',
  'dryRun=All',
  'dryRun=Maybe',
  'fieldManager=%00',
  'propagationPolicy=Sideways',
  'allowWatchBookmarks=yes',
  'sendInitialEvents=true',
  'pretty=1',
  'a=b&a=c&a=d',
  '=',
  '&&&',
];
const METHODS = [
  'GET',
  'GET',
  'GET',
  'POST',
  'POST',
  'PUT',
  'PATCH',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'PROPFIND',
  'FOO',
];
const CONTENT_TYPES = [
  'application/json',
  'application/json',
  MERGE_PATCH,
  STRATEGIC_MERGE_PATCH,
  JSON_PATCH,
  APPLY_PATCH,
  'application/yaml',
  PROTOBUF,
  'text/plain',
  'application/json; charset=utf-16',
  'multipart/form-data; boundary=x',
  '',
];
const ACCEPTS = [
  'application/json',
  '*/*',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  METADATA_LIST,
  PROTOBUF,
  PROTOBUF_WATCH_STREAM,
  'text/html',
  'application/xml',
  ';;;',
];

/** Builds hostile requests from one seed. */
export class RequestFuzzer {
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  next(): FuzzRequest {
    const roll = this.random();
    const as = roll < 0.03 ? 'anonymous' : roll < 0.06 ? 'bad-token' : 'admin';
    const method = this.pick(METHODS);
    const headers: Record<string, string | string[]> = {};
    if (as === 'bad-token') headers['authorization'] = this.badCredentials();
    if (this.chance(0.5)) headers['accept'] = this.pick(ACCEPTS);
    if (this.chance(0.05))
      headers['impersonate-user'] = this.pick(['system:anonymous', 'nobody', '', 'x'.repeat(500)]);
    if (this.chance(0.02)) headers['impersonate-group'] = this.pick(['system:unauthenticated', 'g', '%00']);
    // The admin's requests act as a user with no rights at all: hostile requests must not change the
    // environment they run in (a DELETE of the CellSet, a deletecollection in kube-system).
    if (as === 'admin' && headers['impersonate-user'] === undefined) headers['impersonate-user'] = FUZZ_USER;
    if (this.chance(0.03))
      headers['traceparent'] = this.pick([
        '00-zz-zz-01',
        '00-' + '0'.repeat(32) + '-' + '0'.repeat(16) + '-01',
        'x',
      ]);
    if (this.chance(0.02)) headers['x-junk'] = 'j'.repeat(Math.floor(this.random() * 8000));
    // Identity headers a caller has no business sending, and impersonation in every shape kube-apiserver
    // reads: repeated lines, commas, oversized lists, extras and uids.
    if (this.chance(0.02)) {
      headers['x-remote-user'] = 'system:admin';
      headers['x-remote-group'] = 'system:masters';
      headers['x-forwarded-for'] = `203.0.113.${Math.floor(this.random() * 256)}`;
    }
    if (this.chance(0.02)) {
      const count = 1 + Math.floor(this.random() * 120);
      const groups = Array.from({ length: count }, (_, i) => `fuzz-group-${i % 40}`);
      headers['impersonate-group'] = this.chance(0.5) ? groups : groups.join(',');
    }
    if (this.chance(0.02))
      headers[`impersonate-extra-${this.pick(['scopes', 'example.com%2Fteam', '%zz', 'A'])}`] = this.pick([
        'view',
        ['a', 'b', 'a'],
        'x'.repeat(300),
      ]);
    if (this.chance(0.01)) headers['impersonate-uid'] = this.pick(['0', 'u'.repeat(200)]);
    if (this.chance(0.01)) headers['connection'] = 'upgrade';
    let body: Buffer | undefined;
    if (['POST', 'PUT', 'PATCH', 'DELETE', 'FOO'].includes(method) && this.chance(0.9)) {
      body = this.body();
      const type = this.pick(CONTENT_TYPES);
      if (type) headers['content-type'] = type;
    }
    return { as, method, path: this.path(), headers, ...(body ? { body } : {}) };
  }

  private path(): string {
    const roll = this.random();
    let path: string;
    if (roll < 0.5) {
      // Shaped like a Kubernetes path, with a hostile part somewhere.
      const group = this.chance(0.5)
        ? '/api/v1'
        : `/apis/${this.pick(['apps', 'batch', 'cells.cellfed.io', 'x'])}/${this.pick(['v1', 'v1alpha1', 'v9'])}`;
      const parts = [group];
      if (this.chance(0.8)) parts.push('namespaces', this.name());
      parts.push(
        this.pick([
          'deployments',
          'configmaps',
          'services',
          'pods',
          'cellsets',
          'cellbackups',
          'namespaces',
          'bogus',
        ]),
      );
      if (this.chance(0.7)) parts.push(this.name());
      if (this.chance(0.3))
        parts.push(this.pick(['status', 'scale', 'exec', 'log', 'proxy', 'attach', 'portforward', 'x']));
      path = parts.join('/');
    } else {
      const count = 1 + Math.floor(this.random() * 10);
      path = '/' + Array.from({ length: count }, () => this.pick(SEGMENTS)).join('/');
      if (this.chance(0.05)) path = '/' + 'a/'.repeat(2000);
    }
    if (this.chance(0.4))
      path +=
        '?' + Array.from({ length: 1 + Math.floor(this.random() * 3) }, () => this.pick(QUERIES)).join('&');
    return path;
  }

  private name(): string {
    return this.pick([
      'web',
      'default',
      'x'.repeat(254),
      'UPPER',
      'a_b',
      '..',
      '%2e',
      'ü',
      '',
      'a.b',
      '-',
      'kube-system',
      `n${Math.floor(this.random() * 1000)}`,
    ]);
  }

  private body(): Buffer {
    const roll = this.random();
    const name = this.name();
    if (roll < 0.15)
      return Buffer.from(
        Array.from({ length: Math.floor(this.random() * 2000) }, () => Math.floor(this.random() * 256)),
      );
    if (roll < 0.3)
      return Buffer.from(JSON.stringify({ metadata: { name } }).slice(0, Math.floor(this.random() * 20)));
    if (roll < 0.45)
      return Buffer.from(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: this.pick([name, 7, [], {}, null, true]),
            namespace: this.name(),
            generateName: this.pick([undefined, '', 'g-', 'x'.repeat(300)]),
          },
          data: this.pick([{ a: 'b' }, 'x', 1, null]),
        }),
      );
    if (roll < 0.55) return Buffer.from('['.repeat(5000) + ']'.repeat(5000));
    if (roll < 0.62)
      return Buffer.from(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  : : :\n\t- bad`);
    if (roll < 0.7)
      return Buffer.concat([
        Buffer.from([0x6b, 0x38, 0x73, 0x00]),
        Buffer.from(Array.from({ length: 64 }, () => Math.floor(this.random() * 256))),
      ]);
    if (roll < 0.78)
      return Buffer.from(
        JSON.stringify([
          {
            op: this.pick(['add', 'remove', 'move', 'bogus']),
            path: this.pick(['/metadata/name', '/x/y/z', '', '~']),
            value: name,
          },
        ]),
      );
    if (roll < 0.8) return Buffer.alloc(4 * 1024 * 1024 + Math.floor(this.random() * 1024), 0x61);
    return Buffer.from(
      JSON.stringify({
        metadata: {
          name,
          resourceVersion: this.pick(['abc', 'cell-1:5,cell-2:x', '', '-1']),
          labels: { 'cellfed.io/rebalance-status': this.pick(['migrating', 'migrated', 'x']) },
        },
      }),
    );
  }

  private badCredentials(): string {
    return this.pick([
      'Bearer ',
      'Bearer x',
      `Bearer ${'t'.repeat(2000)}`,
      'Basic YWRtaW46YWRtaW4=',
      'Negotiate abc',
      'bearer lower',
    ]);
  }

  private chance(p: number): boolean {
    return this.random() < p;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }
}
