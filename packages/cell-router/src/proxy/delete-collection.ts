import type { KubeClient } from '@cellfed/controller-kit';

import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { cellFailure, parseJsonObject, serviceUnavailable } from '../status/kube-status.ts';

interface CellAnswer {
  readonly cell: string;
  readonly code: number;
  readonly text: string;
}

/** The merged answer of a collection request: what the client receives. */
export interface MergedAnswer {
  readonly code: number;
  readonly body: unknown;
}

/**
 * deletecollection of a cellular resource: the same DELETE (DeleteOptions body; the query `pathAndQuery`
 * gives for each source) in every source at once, as the caller. Refused up front with 503 when a source is
 * not connected, so a partial delete is never reported as done.
 */
export async function deleteCollection(
  cells: readonly string[],
  client: (cell: string) => KubeClient | undefined,
  pathAndQuery: (cell: string) => string,
  headers: Record<string, string | string[]>,
  body: Buffer | undefined,
  signal: AbortSignal,
): Promise<MergedAnswer> {
  const clients = cells.map((cell) => [cell, client(cell)] as const);
  const missing = clients.filter(([, c]) => !c).map(([cell]) => cell);
  if (missing.length > 0) {
    return {
      code: 503,
      body: serviceUnavailable(`cells ${missing.join(', ')} are not connected; nothing was deleted`, 1),
    };
  }
  const answers = await Promise.all(
    clients.map(async ([cell, c]): Promise<CellAnswer> => {
      const response = await c!.raw('DELETE', pathAndQuery(cell), {
        headers: {
          ...headers,
          accept: 'application/json',
          ...(body ? { 'content-length': String(body.length) } : {}),
        },
        body: body ?? null,
        signal,
      });
      return { cell, code: response.statusCode, text: await response.body.text() };
    }),
  );
  return mergeDeleted(answers);
}

/**
 * One answer from every cell's: the first failure (its message naming the cell) if any cell failed,
 * otherwise the deleted items of all cells in one list (or the first Success Status when cells answer with
 * one).
 */
function mergeDeleted(answers: readonly CellAnswer[]): MergedAnswer {
  const failed = answers.find((answer) => answer.code >= 300);
  if (failed) {
    const done = answers
      .filter((answer) => answer.code < 300)
      .map((answer) => (answer.cell === CONTROL_PLANE_SOURCE ? 'the control plane' : answer.cell));
    const note = done.length > 0 ? ` (deleted in ${done.join(', ')})` : '';
    return { code: failed.code, body: cellFailure(failed.cell, failed.code, failed.text, note) };
  }
  const bodies = answers.map((answer) => parseJsonObject(answer.text));
  const lists = bodies.filter((body): body is { items: unknown[] } & Record<string, unknown> =>
    Array.isArray(body?.items),
  );
  if (lists.length === 0) return { code: answers[0]?.code ?? 200, body: bodies[0] ?? {} };
  return {
    code: 200,
    body: {
      kind: lists[0]!.kind,
      apiVersion: lists[0]!.apiVersion,
      // Each cell has its own resourceVersions: a merged list has none.
      metadata: {},
      items: lists.flatMap((list) => list.items),
    },
  };
}
