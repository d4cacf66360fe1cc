import { ORPHAN_FINALIZER, type KubeClient } from '@cellfed/controller-kit';

/**
 * Whether a DELETE orphans the object's dependents (`propagationPolicy=Orphan`, or the older
 * `orphanDependents=true`), in its query or its DeleteOptions body.
 */
export function orphansDependents(target: string, body: Buffer | undefined): boolean {
  const query = new URL(target, 'http://router.invalid').searchParams;
  if (query.get('propagationPolicy') === 'Orphan' || query.get('orphanDependents') === 'true') return true;
  if (!body || body.length === 0) return false;
  try {
    const options = JSON.parse(body.toString('utf8')) as {
      propagationPolicy?: unknown;
      orphanDependents?: unknown;
    };
    return options.propagationPolicy === 'Orphan' || options.orphanDependents === true;
  } catch {
    // Not JSON (protobuf DeleteOptions): the cell reads it; held dependents are then not orphaned.
    return false;
  }
}

/**
 * Adds {@link ORPHAN_FINALIZER} to the object before an orphaning DELETE, as the caller, so that it stays
 * until cellfed's collector has orphaned its held dependents. A strategic merge patch appends to the list;
 * a custom resource takes only JSON patches. Whatever the cell answers, the DELETE that follows answers
 * the caller (an object already being deleted takes no new finalizer, and needs none).
 */
export async function holdForOrphaning(
  client: KubeClient,
  path: string,
  headers: Record<string, string | string[]>,
  signal: AbortSignal,
): Promise<void> {
  const patch = (contentType: string, body: unknown) =>
    client.raw('PATCH', path, {
      headers: { ...headers, 'content-type': contentType, accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  let answer = await patch('application/strategic-merge-patch+json', {
    metadata: { finalizers: [ORPHAN_FINALIZER] },
  });
  if (answer.statusCode === 415) {
    await answer.body.dump();
    answer = await patch('application/json-patch+json', [
      { op: 'add', path: '/metadata/finalizers/-', value: ORPHAN_FINALIZER },
    ]);
    if (answer.statusCode === 422) {
      await answer.body.dump();
      answer = await patch('application/json-patch+json', [
        { op: 'add', path: '/metadata/finalizers', value: [ORPHAN_FINALIZER] },
      ]);
    }
  }
  await answer.body.dump();
}
