import { madeByItsCell } from '@cellfed/federation';

import {
  collectionSources,
  type NamespaceLabels,
  type Placement,
  type RoutingState,
} from '../routing/route-plan.ts';
import { badRequest, serviceUnavailable, type KubeStatus } from '../status/kube-status.ts';
import { CellPager, itemMeta, type CellLister } from './cell-pager.ts';
import type { ItemMeta } from './item-source.ts';
import { CellStream } from './cell-stream.ts';
import type { ItemSource } from './item-source.ts';
import { decodeContinue, encodeCellVersions, encodeContinue, type CellCursor } from './cell-versions.ts';
import { newestCopy, shownCopy, type CellCopy } from './copy-choice.ts';
import type { CollectionOutcome, StreamedAnswer } from './streamed-answer.ts';
import type { OwnerUids } from '../views/owner-uids.ts';
import { jsonListWriter, protobufListWriter } from './list-writer.ts';
import { takeInvolvedUid } from '../views/involved-uid.ts';
import { realClock } from '@cellfed/controller-kit';
import { asksControlPlane, ownObjectView, ownObjectsOnly } from './own-objects.ts';
import { withRequirement } from '../request/selector-terms.ts';
import type { CellularResource } from '../routing/cellular-resources.ts';
import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { CellTokenError, CellListError } from '../errors.ts';
import type { ResourceHistory } from '../history/resource-history.ts';
import { versionSource } from './source-versions.ts';
import { resolveCollectionStart } from './watch-start.ts';

/**
 * How many items the router asks each cell for at a time when the client set no limit: each page is a
 * request the apiserver serves on its own, so small pages cost the cells more (500: about 0.6 s for 30k
 * ConfigMaps over 3 cells; 5000: about 0.49 s), while each cell holds at most two pages in the router.
 */
const DEFAULT_PAGE_SIZE = 5000;
/** How much more than its even share of a client's page each cell is asked for. */
const PAGE_MARGIN = 1.2;

export interface MergedListRequest {
  readonly state: RoutingState;
  /** The resource listed: its group and name. */
  readonly resource: CellularResource;
  /** Owner uids of cell-made objects as clients know them (see OwnerUids); as stored without. */
  readonly ownerUids?: OwnerUids;
  /** Placed by the ring (the default), or cell-made: read from the control plane too, never filtered by the ring. */
  readonly placement?: Placement;
  readonly namespaceLabels: NamespaceLabels;
  /**
   * Whether the control plane deleted this namespace (and has not made it again): its objects may linger in
   * the cells until the mirror deletes the cells' namespaces, and are not listed meanwhile, so a list after
   * `kubectl delete namespace` returns shows none of them, as one apiserver's would.
   */
  readonly namespaceDeleted?: (namespace: string) => boolean;
  readonly client: (cell: string) => CellLister | undefined;
  /** The request target: collection path and the caller's query. */
  readonly target: string;
  /** The namespace listed (never a system one: those go to the control plane whole); none for all. */
  readonly namespace?: string;
  /** Headers for the cells: the caller's (impersonation) with a JSON-only accept. */
  readonly headers: Record<string, string | string[]>;
  readonly signal: AbortSignal;
  readonly pageSize?: number;
  /** Ask the cells for protobuf and answer protobuf (the client accepts nothing else); JSON otherwise. */
  readonly protobuf?: boolean;
  /** The resource's history in this router: where an exact list at one object version starts. */
  readonly history?: ResourceHistory;
}

const CONTROL_PARAMS = ['limit', 'continue', 'resourceVersion', 'resourceVersionMatch'];

/**
 * A LIST of a cellular resource across cells: every live cell in parallel, page by page, merged in the
 * apiservers' own order (namespace, then name) so that `limit`/`continue` walk a stable global order; of an
 * object present in several cells only the copy the routing rule reads is shown. The answer carries a
 * composite resourceVersion (every cell's) and, when paged, a composite continue token (every cell's own
 * token and how far into its page the client has got). Tables (`kubectl get`) merge row by row.
 */
export async function serveMergedList(
  request: MergedListRequest,
  out: StreamedAnswer,
): Promise<CollectionOutcome> {
  const url = new URL(request.target, 'http://router.invalid');
  const params = url.searchParams;
  const limit = Number(params.get('limit') ?? 0);
  if (!Number.isInteger(limit) || limit < 0) return refuse(badRequest(`limit must be a positive integer`));
  const query = new URLSearchParams(params);
  for (const name of CONTROL_PARAMS) query.delete(name);
  const accept = request.headers['accept'];
  const involved =
    request.ownerUids && !request.protobuf
      ? takeInvolvedUid(request.resource, query, Array.isArray(accept) ? accept.join(',') : (accept ?? ''))
      : undefined;

  let cursors: Map<string, CellCursor> | undefined;
  let versions: Map<string, string> | undefined;
  const rv = params.get('resourceVersion') ?? undefined;
  const rvMatch = params.get('resourceVersionMatch') ?? undefined;
  // The control plane is asked only where it may hold what every apiserver makes for itself: not for
  // Services outside `default`, say.
  const placement = request.placement ?? 'ring';
  const sources = collectionSources(request.state, placement, request.resource).filter(
    (source) =>
      source !== CONTROL_PLANE_SOURCE || asksControlPlane(request.resource, placement, request.namespace),
  );
  try {
    const token = params.get('continue');
    if (token) cursors = decodeContinue(token);
    else if (rv && rvMatch !== 'Exact' && rv !== '0' && /^[0-9]+$/.test(rv)) {
      // Not older than one object version: its cell at its own version, every other at its latest.
      // One of no live source (a cell that left): every source's latest is not older than it.
      const named = versionSource(rv, sources);
      versions = new Map(named ? [[named.source, named.own]] : []);
    } else {
      // Exactly at one: where the resource's history places it (every cell at the cut just after it).
      const start = await resolveCollectionStart(
        rv ?? '',
        sources,
        request.history,
        realClock,
        request.signal,
      );
      if (start.kind === 'refused') return refuse(start.status);
      if (start.kind === 'cut') versions = start.versions;
    }
  } catch (error) {
    if (error instanceof CellTokenError) return refuse(badRequest(error.message));
    throw error;
  }

  // A continued list stays on the cells it started with: it is one snapshot.
  const cells = cursors ? [...cursors.keys()].filter((cell) => !cursors.get(cell)!.done) : [...sources];
  const missing = cells.filter((cell) => !request.client(cell));
  if (missing.length > 0)
    return refuse(serviceUnavailable(`cells ${missing.join(', ')} are not connected`, 1));

  // In one namespace, of a ring-placed resource the control plane holds nothing clients see but what it
  // makes for itself (kube-root-ca.crt): only that is read from it. A list of all namespaces reads it whole,
  // for what it holds in the system namespaces.
  const ownOnly = (cell: string) =>
    request.namespace === undefined ? undefined : ownObjectsOnly(request.resource, placement, cell);
  const queryOf = (cell: string) => {
    const own = ownOnly(cell);
    if (own === undefined) return query;
    const narrowed = new URLSearchParams(query);
    narrowed.set('fieldSelector', withRequirement(narrowed.get('fieldSelector'), own));
    return narrowed;
  };
  // A client's page takes about limit/cells from each cell (the ring spreads objects evenly), so each cell
  // is asked for that with some margin; a cell that runs short is asked for its next page mid-merge. What
  // the control plane holds of a ring-placed resource is not spread by the ring (its own objects, the
  // system namespaces'): it is not counted among the cells sharing a page, and is asked for a whole one.
  const ringSpread = (cell: string) => placement !== 'ring' || cell !== CONTROL_PLANE_SOURCE;
  const spreadOver = Math.max(1, cells.filter(ringSpread).length);
  const pageSize = (cell: string) =>
    limit > 0
      ? ringSpread(cell)
        ? Math.min(limit, Math.ceil((limit * PAGE_MARGIN) / spreadOver) + 2)
        : limit
      : (request.pageSize ?? DEFAULT_PAGE_SIZE);
  const start = (cell: string) =>
    rv === '0'
      ? { rv: '0', ...(rvMatch ? { rvMatch } : {}) }
      : versions?.has(cell)
        ? { rv: versions.get(cell)!, ...(rvMatch ? { rvMatch } : {}) }
        : {};
  // A whole JSON list is streamed from each cell, unpaged: the merge holds each cell's next item, not its
  // answer, and writes while the cells still send. A client's page, a continued list, a Table (its rows
  // are few: kubectl asks in chunks) and protobuf (held whole anyway) are read page by page.
  const whole = limit === 0 && !cursors && !request.protobuf && !acceptsTable(accept);
  const pagers: ItemSource[] = cells.map((cell) => {
    const asked = {
      client: request.client(cell)!,
      cell,
      path: url.pathname,
      query: queryOf(cell),
      headers: request.headers,
      signal: request.signal,
    };
    return whole
      ? new CellStream(asked, start(cell))
      : new CellPager(
          {
            ...asked,
            pageSize: pageSize(cell),
            prefetch: limit === 0,
            ...(request.protobuf ? { protobuf: true } : {}),
          },
          cursors ? { cursor: cursors.get(cell)! } : start(cell),
        );
  });
  let firsts;
  try {
    firsts = await Promise.all(pagers.map((pager) => pager.first()));
  } catch (error) {
    if (error instanceof CellListError) return refuse(error.status);
    throw error;
  }
  const table = firsts.some((page) => page.kind === 'Table');

  out.start(200);
  const writer = request.protobuf
    ? protobufListWriter(out, shapeOf(pagers), request.placement !== 'anywhere')
    : await jsonListWriter(out, {
        table,
        columns: firsts.find((page) => page.columnDefinitions)?.columnDefinitions,
        copies: request.placement !== 'anywhere',
        ownerUids: request.ownerUids,
        involved,
      });
  let given = 0;
  for (;;) {
    if (limit > 0 && given >= limit) break;
    if (!pagers.every((pager) => pager.ready())) await Promise.all(pagers.map((pager) => pager.peek()));
    const next = takeVisible(pagers, table, request);
    if (next === END) break;
    if (next === undefined) continue;
    if (await writer.item(next.cell, next.item)) given += 1;
  }
  let continueToken: string | undefined;
  if (limit > 0) {
    // Without fetching a cell's next page only to learn it is not empty: kube clients take an empty last
    // page with no continue token as the end, as they do after a filtered page.
    if (pagers.some((pager) => pager.hasMore())) {
      const next = new Map<string, CellCursor>(
        cursors ? [...cursors].filter(([, cursor]) => cursor.done) : [],
      );
      for (const pager of pagers) next.set(pager.cell, pager.cursor());
      continueToken = encodeContinue(next);
    }
  }
  // Every cell's position, and the list's kind: known at the end for a streamed custom resource list.
  const listVersions = new Map([
    ...(cursors ? [...cursors].map(([cell, cursor]) => [cell, cursor.rv] as const) : []),
    ...pagers.map((pager) => [pager.cell, pager.listFields().resourceVersion] as const),
  ]);
  await writer.finish({
    ...shapeOf(pagers),
    resourceVersion: encodeCellVersions(listVersions),
    continue: continueToken,
  });
  return { code: 200 };

  function refuse(status: KubeStatus): CollectionOutcome {
    return { code: status.code, status };
  }
}

const END = Symbol('end of every cell');

/** The list's kind and version, as its first source says them. */
function shapeOf(pagers: readonly ItemSource[]): { kind: string; apiVersion: string } {
  const fields = pagers[0]?.listFields();
  return { kind: fields?.kind ?? 'List', apiVersion: fields?.apiVersion ?? 'v1' };
}

function acceptsTable(accept: string | string[] | undefined): boolean {
  return (Array.isArray(accept) ? accept.join(',') : (accept ?? '')).includes('as=Table');
}

/**
 * Takes the smallest key across cells (every pager `ready`), and every cell's copy of it; returns the copy
 * the routing rule shows (as the cell stores it), undefined if it shows none of them, END when every cell
 * is done.
 */
function takeVisible(
  pagers: readonly ItemSource[],
  table: boolean,
  request: MergedListRequest,
): CellCopy<Buffer | string> | undefined | typeof END {
  let smallest: string | undefined;
  for (const pager of pagers) {
    if (pager.head() === undefined) continue;
    const key = pager.headKey(table);
    if (smallest === undefined || key < smallest) smallest = key;
  }
  if (smallest === undefined) return END;
  const copies: CellCopy<Buffer | string>[] = [];
  let meta: ItemMeta = {};
  for (const pager of pagers) {
    if (pager.head() === undefined || pager.headKey(table) !== smallest) continue;
    meta = itemMeta(pager.head(), table);
    copies.push({
      cell: pager.cell,
      labels: meta.labels,
      item: pager.headJson(),
      created: meta.creationTimestamp,
      made: madeByItsCell(meta),
    });
    pager.take();
  }
  const { table: routing } = request.state;
  const key = { namespace: meta.namespace ?? '', name: meta.name ?? '' };
  const placement = request.placement ?? 'ring';
  const routed: CellCopy<Buffer | string>[] = [];
  for (const copy of copies) {
    const view = ownObjectView(request.resource, placement, copy.cell, key.namespace, key.name);
    if (view === 'show') return copy;
    if (view === 'route') routed.push(copy);
  }
  if (routed.length === 0) return undefined;
  if (key.namespace !== '' && request.namespaceDeleted?.(key.namespace)) return undefined;
  return placement === 'anywhere'
    ? newestCopy(routed)
    : shownCopy(routing.route(routing.keyOf(key, request.namespaceLabels(key.namespace))), routed);
}
