import type { KubeClient } from '@cellfed/controller-kit';

/** An engaged cell as the reconcilers reach it: its id and a client that only makes requests. */
export interface CellEnd {
  readonly id: string;
  readonly client: Pick<KubeClient, 'request'>;
}

/** The engaged cell of an id; undefined while it is not engaged (new, unreachable, or gone). */
export type CellLookup = (id: string) => CellEnd | undefined;
