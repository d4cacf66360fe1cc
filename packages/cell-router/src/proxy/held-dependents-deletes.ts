import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '@cellfed/api';
import type { KubeClient } from '@cellfed/controller-kit';
import { JSON_PATCH, STRATEGIC_MERGE_PATCH } from '@cellfed/federation';

/**
 * The finalizer cellfed's collector needs on an object before a DELETE that propagates to its held
 * dependents in a way only it can carry out: {@link ORPHAN_FINALIZER} for `propagationPolicy=Orphan` (or the
 * older `orphanDependents=true`), {@link FOREGROUND_FINALIZER} for `Foreground`; none for a background delete
 * (held dependents are collected once the owner is gone). Read from the query or the DeleteOptions body.
 */
export function heldDependentsFinalizer(target: string, body: Buffer | undefined): string | undefined {
  const query = new URL(target, 'http://router.invalid').searchParams;
  let policy =
    query.get('propagationPolicy') ?? (query.get('orphanDependents') === 'true' ? 'Orphan' : undefined);
  if (policy === undefined && body && body.length > 0) {
    try {
      const options = JSON.parse(body.toString('utf8')) as {
        propagationPolicy?: unknown;
        orphanDependents?: unknown;
      };
      if (typeof options.propagationPolicy === 'string') policy = options.propagationPolicy;
      else if (options.orphanDependents === true) policy = 'Orphan';
    } catch {
      // Not JSON (protobuf DeleteOptions): the cell reads it; held dependents then follow a background delete.
    }
  }
  return policy === 'Orphan' ? ORPHAN_FINALIZER : policy === 'Foreground' ? FOREGROUND_FINALIZER : undefined;
}

/**
 * Adds `finalizer` (see {@link heldDependentsFinalizer}) to the object before its DELETE, as the caller, so
 * that it stays until cellfed's collector has dealt with its held dependents. A strategic merge patch
 * appends to the list; a custom resource takes only JSON patches. Whatever the cell answers, the DELETE that
 * follows answers the caller (an object already being deleted takes no new finalizer, and needs none).
 */
export async function holdForCollector(
  client: KubeClient,
  path: string,
  headers: Record<string, string | string[]>,
  finalizer: string,
  signal: AbortSignal,
): Promise<void> {
  const patch = (contentType: string, body: unknown) =>
    client.raw('PATCH', path, {
      headers: { ...headers, 'content-type': contentType, accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  let answer = await patch(STRATEGIC_MERGE_PATCH, {
    metadata: { finalizers: [finalizer] },
  });
  if (answer.statusCode === 415) {
    await answer.body.dump();
    answer = await patch(JSON_PATCH, [{ op: 'add', path: '/metadata/finalizers/-', value: finalizer }]);
    if (answer.statusCode === 422) {
      await answer.body.dump();
      answer = await patch(JSON_PATCH, [{ op: 'add', path: '/metadata/finalizers', value: [finalizer] }]);
    }
  }
  await answer.body.dump();
}
