import type { KubeStatus } from '../status/kube-status.ts';

/** How a list or watch across cells writes its answer while it is produced. */
export interface StreamedAnswer {
  start(code: number): void;
  write(chunk: string | Buffer): Promise<void>;
  end(): void;
}

/** What a list or watch across cells ended with: its code, or the Status to answer instead of any stream. */
export type CollectionOutcome = { code: number; status?: KubeStatus };
