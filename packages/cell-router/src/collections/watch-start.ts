import type { Clock } from '@cellfed/controller-kit';

import { CellTokenError } from '../errors.ts';
import type { HistoryCut, ResourceHistory } from '../history/resource-history.ts';
import { badRequest, failure, type KubeStatus } from '../status/kube-status.ts';
import { decodeCellVersions } from './cell-versions.ts';
import { versionSource } from './source-versions.ts';

/** Where a list or watch starts, from its `resourceVersion`. */
export type CollectionStart =
  /** `''`: the latest. */
  | { readonly kind: 'latest' }
  /** `'0'`: any. */
  | { readonly kind: 'any' }
  /** Each source's own version: a list's composite, or where an object version sits in the history. */
  | { readonly kind: 'cut'; readonly versions: Map<string, string> }
  | { readonly kind: 'refused'; readonly status: KubeStatus };

/** How long a version the history has not reached yet is waited for (kube-apiserver waits 3 s too). */
const AHEAD_WAIT_MS = 3_000;

/**
 * Resolves a collection's `resourceVersion`: the router's composite names every source's version; one object
 * version (a write's answer, a GET's, a list item's, a watch event's) is placed in the resource's history,
 * which gives the cut just after it. A version from before what the history holds is `410 Expired`, one it has
 * not reached within 3 s `504` with the cause kube-apiserver gives (`ResourceVersionTooLarge`), so clients
 * list again or retry as they would with one apiserver.
 */
export async function resolveCollectionStart(
  resourceVersion: string,
  sources: readonly string[],
  history: ResourceHistory | undefined,
  clock: Clock,
  signal?: AbortSignal,
): Promise<CollectionStart> {
  if (resourceVersion === '') return { kind: 'latest' };
  if (resourceVersion === '0') return { kind: 'any' };
  let versions: Map<string, string> | undefined;
  try {
    versions = decodeCellVersions(resourceVersion);
  } catch (error) {
    if (error instanceof CellTokenError) return { kind: 'refused', status: badRequest(error.message) };
    throw error;
  }
  if (versions) return { kind: 'cut', versions };
  if (!/^[0-9]+$/.test(resourceVersion))
    return {
      kind: 'refused',
      status: badRequest(`resourceVersion "${resourceVersion}" was not issued by this router`),
    };
  const named = versionSource(resourceVersion, sources);
  const tooOld: CollectionStart = {
    kind: 'refused',
    status: expired(`resourceVersion ${resourceVersion}: too old resource version`),
  };
  if (!named) return tooOld;
  // One source's own version is a point in all there is.
  if (sources.length === 1) return { kind: 'cut', versions: new Map([[named.source, named.own]]) };
  if (!history) return tooOld;
  const own = Number(named.own);
  let place = history.place(named.source, own);
  if (place.kind === 'ahead') place = await placeWhenReached(history, named.source, own, clock, signal);
  if (place.kind === 'at') {
    const versions = asStrings(place.cut, sources);
    // A source the history did not follow then has no place in it: the start cannot be told for it.
    return versions.size === sources.length ? { kind: 'cut', versions } : tooOld;
  }
  if (place.kind === 'expired') return tooOld;
  return {
    kind: 'refused',
    status: failure(504, 'Timeout', `Too large resource version: ${resourceVersion}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),
  };
}

/** Waits for the history to reach `version` of `source`, for at most {@link AHEAD_WAIT_MS}. */
function placeWhenReached(
  history: ResourceHistory,
  source: string,
  version: number,
  clock: Clock,
  signal?: AbortSignal,
): Promise<ReturnType<ResourceHistory['place']>> {
  return new Promise((resolve) => {
    const done = () => {
      unlisten();
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve(history.place(source, version));
    };
    const unlisten = history.listen(() => {
      if (history.place(source, version).kind !== 'ahead') done();
    });
    const timer = clock.setTimer(AHEAD_WAIT_MS, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function asStrings(cut: HistoryCut, sources: readonly string[]): Map<string, string> {
  const versions = new Map<string, string>();
  for (const source of sources) {
    const version = cut.get(source);
    if (version !== undefined) versions.set(source, String(version));
  }
  return versions;
}

function expired(message: string): KubeStatus {
  return failure(410, 'Expired', message);
}
