import type { Logger } from 'pino';

import type { Lane } from '../queue/lane.ts';

/**
 * What a reconciler is asked to do: make what `key` names right. Nothing else is passed. The key is typed:
 * the controller reads the queue's string with its key codec (@cellfed/federation's key-codec.ts), so a reconciler reads
 * fields (`key.cell`, `key.namespace`) and never parses.
 */
export interface ReconcileRequest<K = string> {
  key: K;
  /** The lane the key came from: `low` for lists and resyncs, `high` for changes. */
  lane: Lane;
  /** Aborted when the reconcile times out or the controller stops; pass it to every call. */
  signal: AbortSignal;
  /** Carries controller, cell, key and reconcileID. */
  log: Logger;
}

/** What a reconciler returns: nothing (done), or when to look again although nothing changed. */
export interface ReconcileResult {
  /** Look at the key again after this many milliseconds (backoff is reset). */
  requeueAfterMs?: number;
  /** Look at the key again after its backoff, without counting an error. */
  requeue?: boolean;
}

/**
 * Level-based: read the current state for `key` and act; no separate create/update/delete paths. Throw to
 * retry with backoff, throw a `TerminalError` to give up on the key (counted, not retried).
 */
export interface Reconciler<K = string> {
  // Returning nothing means done; `void` lets `async () => {}` reconcilers type-check without `return {}`.
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
  reconcile(request: ReconcileRequest<K>): Promise<ReconcileResult | void>;
}
