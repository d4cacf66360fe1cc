import { Counter, Histogram, type Registry } from 'prom-client';

/** kube-apiserver's request-duration buckets (apiserver_request_duration_seconds), trimmed at 60 s. */
const DURATION_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

/** What one finished request is counted as. */
export interface RequestRecord {
  verb: string;
  /** `group/resource` (`/pods` for the core group), or empty for non-resource paths. */
  resource: string;
  /** The cell that answered, `control-plane`, `all-cells`, or empty when the router answered itself. */
  cell: string;
  code: number;
  /** The routing rule's case (1–4) for a cellular object, empty otherwise. */
  routeCase: string;
  fenced: boolean;
  seconds: number;
}

/** The verbs kube-apiserver labels its metrics with; any other (a caller's made-up method) is `other`. */
const KNOWN_VERBS = new Set([
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'proxy',
  'head',
  'post',
  'put',
  'options',
]);

/**
 * At most this many resource label values. A path names whatever resource its caller wants, and each value
 * would be a series kept for good (the router fuzz proof's memory grew with them): a resource is named once
 * an apiserver has served it (an answer under 400) or the router fenced a write to it, `other` until then.
 */
const MAX_RESOURCES = 512;

/**
 * The router's metrics, named after kube-apiserver's (`apiserver_request_total`, …) with the cell added, on
 * the registry it is given. Every label has a bounded set of values, whatever callers send.
 */
export class RouterMetrics {
  private readonly requests: Counter<'verb' | 'resource' | 'cell' | 'code'>;
  private readonly duration: Histogram<'verb' | 'cell'>;
  private readonly cases: Counter<'case'>;
  private readonly fences: Counter<'resource'>;
  /** Reviews the router sent the control plane as itself (not answered from its caches), by kind. */
  private readonly reviews: Counter<'kind'>;
  private readonly resources = new Set<string>();

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'cellfed_router_requests_total',
      help: 'Requests answered by the router, by verb, resource, the cell that answered and HTTP code.',
      labelNames: ['verb', 'resource', 'cell', 'code'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'cellfed_router_request_duration_seconds',
      help: 'Time from request to the end of the response (watches last as long as they are open).',
      labelNames: ['verb', 'cell'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    this.cases = new Counter({
      name: 'cellfed_router_route_cases_total',
      help: 'Single-object requests by routing case (4: settled; 1-3: the object may be moving).',
      labelNames: ['case'],
      registers: [registry],
    });
    this.fences = new Counter({
      name: 'cellfed_router_fenced_writes_total',
      help: 'Writes answered 429 because their object was migrating between cells.',
      labelNames: ['resource'],
      registers: [registry],
    });
    this.reviews = new Counter({
      name: 'cellfed_router_reviews_total',
      help: 'SubjectAccessReviews and TokenReviews the router sent the control plane (its caches answer the rest).',
      labelNames: ['kind'],
      registers: [registry],
    });
  }

  /** One review sent: a SubjectAccessReview or a TokenReview. */
  reviewSent(kind: 'subjectaccessreview' | 'tokenreview'): void {
    this.reviews.inc({ kind });
  }

  record(request: RequestRecord): void {
    const verb = KNOWN_VERBS.has(request.verb) ? request.verb : 'other';
    // A fence is only ever for a resource of the CellSet: named too.
    const resource = this.resourceLabel(request.resource, request.code < 400 || request.fenced);
    this.requests.inc({ verb, resource, cell: request.cell, code: String(request.code) });
    this.duration.observe({ verb, cell: request.cell }, request.seconds);
    if (request.routeCase) this.cases.inc({ case: request.routeCase });
    if (request.fenced) this.fences.inc({ resource });
  }

  /** The resource as its label (see {@link MAX_RESOURCES}). */
  private resourceLabel(resource: string, served: boolean): string {
    if (resource === '' || this.resources.has(resource)) return resource;
    if (!served || this.resources.size >= MAX_RESOURCES) return 'other';
    this.resources.add(resource);
    return resource;
  }
}
