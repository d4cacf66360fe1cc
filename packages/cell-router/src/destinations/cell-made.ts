import { publicErrorMessage } from '../status/public-error.ts';

import { newestCopy, type CellCopy } from '../collections/copy-choice.ts';
import { requestObjectPath } from '../request/object-path.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';

/** What finding a cell-made object needs of a source's client (KubeClient.raw). */
export interface SourceReader {
  raw(
    method: 'GET',
    target: string,
    options: { headers: Record<string, string | string[]>; signal?: AbortSignal },
  ): Promise<{ statusCode: number; body: { text(): Promise<string> } }>;
}

/** Where a request for one cell-made object goes. */
export type CellMadeHolder =
  /** The source that holds it (the newest copy's, if several do). */
  | { readonly kind: 'found'; readonly source: string }
  /** No source holds it: the ring's cell answers (a 404, or a 403 for a caller who may not read it there). */
  | { readonly kind: 'nowhere' }
  /** No source that answered holds it, and these did not answer: it may be in one of them. */
  | { readonly kind: 'unknown'; readonly unanswered: readonly string[]; readonly reason: string };

/** What {@link findCellMade} reads of a copy it is answered: whether it is the one looked for. */
export type CopyFilter = (metadata: { readonly ownerReferences?: readonly unknown[] }) => boolean;

/**
 * Asks every source for the object the request names (its path without subresource), as the caller, in
 * parallel. A cell-made object has no place the router could compute (routing/cell-made-resources.ts): it is
 * where its owner's cell made it. A copy `accept` refuses counts as not there.
 */
export async function findCellMade(
  info: ResourceRequestInfo,
  sources: readonly string[],
  client: (source: string) => SourceReader | undefined,
  headers: Record<string, string | string[]>,
  signal?: AbortSignal,
  accept: CopyFilter = () => true,
): Promise<CellMadeHolder> {
  const path = requestObjectPath(info, info.namespace, info.name);
  const answers = await Promise.all(
    sources.map(
      async (source): Promise<CellCopy<undefined> | { failed: string; source: string } | undefined> => {
        const reader = client(source);
        if (!reader) return { source, failed: 'not connected' };
        try {
          const answer = await reader.raw('GET', path, {
            headers: { ...headers, accept: 'application/json' },
            ...(signal ? { signal } : {}),
          });
          const text = await answer.body.text();
          if (answer.statusCode === 200) {
            const metadata =
              (JSON.parse(text) as { metadata?: Parameters<CopyFilter>[0] & { creationTimestamp?: string } })
                .metadata ?? {};
            if (!accept(metadata)) return undefined;
            return { cell: source, labels: undefined, item: undefined, created: metadata.creationTimestamp };
          }
          if (answer.statusCode >= 500 || answer.statusCode === 429)
            return { source, failed: `answered ${answer.statusCode}` };
          return undefined; // 404, or 403 for a caller who may not read it there
        } catch (error) {
          if (signal?.aborted) throw error;
          return { source, failed: publicErrorMessage(error) };
        }
      },
    ),
  );
  const copies = answers.filter(
    (answer): answer is CellCopy<undefined> => answer !== undefined && 'cell' in answer,
  );
  const holder = newestCopy(copies);
  if (holder) return { kind: 'found', source: holder.cell };
  const failed = answers.filter(
    (answer): answer is { failed: string; source: string } => answer !== undefined && 'failed' in answer,
  );
  if (failed.length > 0)
    return {
      kind: 'unknown',
      unanswered: failed.map((one) => one.source),
      reason: failed.map((one) => `${one.source}: ${one.failed}`).join('; '),
    };
  return { kind: 'nowhere' };
}

/** Where a request for one cell-made object goes: a source's id, or why the router cannot tell. */
export type CellMadeTarget =
  | { readonly kind: 'source'; readonly source: string; readonly route: 'cell-made' | 'cell-made-ring' }
  | { readonly kind: 'unknown'; readonly reason: string };

/**
 * The source a request for one cell-made object goes to: the one holding it; for a create of the object
 * itself (a user's Pod, an Event) and for an object nowhere, the ring's cell (`ringCell`) — it creates, or
 * answers 404 as one apiserver would. A subresource create (a Pod's eviction or binding) needs the Pod.
 */
export async function cellMadeTarget(
  info: ResourceRequestInfo,
  ringCell: string,
  sources: readonly string[],
  client: (source: string) => SourceReader | undefined,
  headers: Record<string, string | string[]>,
  signal?: AbortSignal,
): Promise<CellMadeTarget> {
  if (info.verb === 'create' && info.subresource === '')
    return { kind: 'source', source: ringCell, route: 'cell-made-ring' };
  const holder = await findCellMade(info, sources, client, headers, signal);
  if (holder.kind === 'unknown') return { kind: 'unknown', reason: holder.reason };
  return holder.kind === 'found'
    ? { kind: 'source', source: holder.source, route: 'cell-made' }
    : { kind: 'source', source: ringCell, route: 'cell-made-ring' };
}
