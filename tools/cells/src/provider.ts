import type { EnvFile } from './env-file.ts';
import type { Logger } from './log.ts';

export interface UpOptions {
  /** Directory for env.json, kubeconfigs, logs and the provider's state. */
  dir: string;
  /** Number of cells besides the router control plane. */
  cells: number;
  /** Run kube-controller-manager next to each apiserver (local provider). */
  controllerManager: boolean;
  /** Images to load into every cluster (kind provider). */
  images: readonly string[];
  log: Logger;
  /** Aborting stops `up` and everything it started. */
  signal?: AbortSignal;
}

export interface AddCellOptions {
  dir: string;
  controllerManager: boolean;
  /** More kube-apiserver flags for this cell only (a tracing configuration, say). */
  apiserverArgs?: readonly string[];
  log: Logger;
  signal?: AbortSignal;
}

export interface RemoveCellOptions {
  dir: string;
  id: string;
  log: Logger;
}

export type CellEntry = EnvFile['cells'][number];

export interface DownOptions {
  dir: string;
  log: Logger;
}

/** Brings real cells up and down; `local` and `kind` implement it, the suite does not care which. */
export interface Provider {
  readonly name: EnvFile['provider'];
  /** Returns when the control plane and every cell are ready and env.json is written. Idempotent. */
  up(options: UpOptions): Promise<EnvFile>;
  /** Stops everything `up` started in `dir`. Idempotent: nothing to stop is not an error. */
  down(options: DownOptions): Promise<void>;
  /** One more cell in a running environment, its Secret in the control plane. */
  addCell?(options: AddCellOptions): Promise<CellEntry>;
  /** Stops a cell and forgets it. */
  removeCell?(options: RemoveCellOptions): Promise<void>;
  /** Kills a cell's apiserver and etcd at once, as a failure does; the cell stays in env.json. */
  killCell?(options: RemoveCellOptions): Promise<void>;
}
