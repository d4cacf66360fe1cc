import { ORIGIN_GENERATION_ANNOTATION } from '@cellfed/api';
import { MERGE_PATCH, heldSpecPatch, type KubeObject, type ObjectMeta } from '@cellfed/federation';

import { isConflict } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
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
   * nothing before the commit: the commit sets them (only `suspend`: @cellfed/federation's heldSpecPatch) and
   * removes the annotation in the same write.
   */
  heldSpec?: string;
  /** The field managers the object had where it was copied from; none known, none written. */
  managedFields?: ObjectMeta['managedFields'];
  /** The copy's metadata as last seen (as written, or cached); read afresh when absent or stale. */
  known?: Readonly<ObjectMeta>;
  /**
   * The generation clients knew of the object the copy is of, recorded with the copy's own
   * (ORIGIN_GENERATION_ANNOTATION) so that clients go on seeing it; none known, none recorded.
   */
  shownGeneration?: number;
  /**
   * The copy's own generation when it was made (1 after a create): a generation it has since is a client's
   * write (one that reached it between its source's handover and this commit), which clients count.
   */
  madeAtGeneration?: number;
  /**
   * Whether the copy's apiserver counts a change of annotations as a new generation (a Deployment's, for its
   * old rollback annotation): the commit's own write then makes one.
   */
  annotationsBumpGeneration?: boolean;
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
    // The copy's generation once this write is in (it is on this version of the copy): one more where the
    // write changes what its apiserver counts, so that clients see the generation they knew from the start.
    const own = (current.generation ?? 0) + (held !== undefined || options.annotationsBumpGeneration ? 1 : 0);
    const known =
      options.shownGeneration === undefined || current.generation === undefined
        ? undefined
        : options.shownGeneration + current.generation - (options.madeAtGeneration ?? 1);
    const origin = known === undefined ? {} : { [ORIGIN_GENERATION_ANNOTATION]: `${known}:${own}` };
    try {
      const written = await client.request<KubeObject>('PATCH', path, {
        body: {
          metadata: {
            resourceVersion: current.resourceVersion,
            annotations: { [mark]: null, ...(held === undefined ? {} : { [heldSpec!]: null }), ...origin },
            ...(managedFields?.length ? { managedFields } : {}),
          },
          // Only what cellfed holds back is set back (held-spec.ts): this write passes no admission.
          ...(held === undefined ? {} : { spec: heldSpecPatch(held) }),
        },
        contentType: MERGE_PATCH,
        query: { fieldManager },
        signal,
      });
      const generation = written?.metadata?.generation;
      if (known !== undefined && generation !== undefined && generation !== own)
        // A kind that counted the write otherwise: recorded as it is (an annotation changes no generation
        // but a Deployment's, which is counted above).
        await client.request('PATCH', path, {
          body: {
            metadata: { annotations: { [ORIGIN_GENERATION_ANNOTATION]: `${known}:${generation}` } },
          },
          contentType: MERGE_PATCH,
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
