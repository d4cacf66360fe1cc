import { isConflict } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import type { KubeObject, ObjectMeta } from '../kube/kube-object.ts';
import { readIfExists } from '../kube/read-if-exists.ts';

/** How many times a commit is tried against a copy the cell's controllers are writing meanwhile. */
const COMMIT_ATTEMPTS = 5;

export interface CommitCopyOptions {
  client: Pick<KubeClient, 'request'>;
  /** The copy's path in its cell. */
  path: string;
  /** The annotation the copy carries until it is committed. */
  mark: string;
  /**
   * An annotation holding spec fields (a JSON merge patch) the copy was created without, so that its cell ran
   * nothing before the commit: the commit sets them and removes the annotation in the same write.
   */
  heldSpec?: string;
  /** The field managers the object had where it was copied from; none known, none written. */
  managedFields?: ObjectMeta['managedFields'];
  /** The copy's metadata as last seen (as written, or cached); read afresh when absent or stale. */
  known?: Readonly<ObjectMeta>;
  fieldManager: string;
  signal: AbortSignal;
}

/**
 * Commits a copy made by a create (a moved object's new copy, a promoted backup): removes its mark, gives
 * it back the field managers the object had and the spec fields it was created without (`heldSpec`), in one
 * write on a known version. A create gives every field to
 * the creating manager, and a client's next server-side apply of a field it owned (helm upgrading its
 * release) would conflict with it. Read again on a conflict, a few times: the cell's controllers write the
 * copy (its status, a Deployment's revision) meanwhile. Answers whether it wrote: nothing is written to a
 * copy without the mark (committed already) or gone.
 */
export async function commitCopy(options: CommitCopyOptions): Promise<boolean> {
  const { client, path, mark, heldSpec, managedFields, fieldManager, signal } = options;
  let current = options.known;
  for (let attempt = 1; ; attempt++) {
    current ??= (await readIfExists<KubeObject>(client, path, { signal }))?.metadata;
    if (current?.annotations?.[mark] === undefined) return false;
    const held = heldSpec === undefined ? undefined : current.annotations[heldSpec];
    try {
      await client.request('PATCH', path, {
        body: {
          metadata: {
            resourceVersion: current.resourceVersion,
            annotations: { [mark]: null, ...(held === undefined ? {} : { [heldSpec!]: null }) },
            ...(managedFields?.length ? { managedFields } : {}),
          },
          ...(held === undefined ? {} : { spec: JSON.parse(held) as unknown }),
        },
        contentType: 'application/merge-patch+json',
        query: { fieldManager },
        signal,
      });
      return true;
    } catch (error) {
      if (!isConflict(error) || attempt >= COMMIT_ATTEMPTS) throw error;
      current = undefined;
    }
  }
}
