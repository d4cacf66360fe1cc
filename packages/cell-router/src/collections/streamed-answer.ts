import type { KubeStatus } from '../status/kube-status.ts';

/** How a list or watch across cells writes its answer while it is produced. */
export interface StreamedAnswer {
  start(code: number): void;
  /** Adds to the answer; what is written may be held (and sent in one write with what follows). */
  write(chunk: string | Buffer): Promise<void>;
  /** Sends what is held now: a watch does before it waits for its next event. */
  flush(): Promise<void>;
  end(): void;
  /**
   * Ends the answer at once, whatever is unsent: for a client that reads nothing, which a last write would
   * wait on forever (its connection's stream is reset; the client starts again, as after any broken watch).
   */
  cut?(): void;
}

/** What a list or watch across cells ended with: its code, or the Status to answer instead of any stream. */
export type CollectionOutcome = { code: number; status?: KubeStatus };
