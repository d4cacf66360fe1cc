/** Where a request goes, or the Status it gets instead: the routing decision the proxy acts on. */
import type { KubeClient } from '@cellfed/controller-kit';

import type { KubeStatus } from '../status/kube-status.ts';
import { type RequestOutcome } from '../server/request-outcome.ts';

/** A 503 a client may retry: said in the header client-go and client-node read, as in the Status. */
export const RETRY_SOON = { 'retry-after': '1' };

/** The Status a request gets instead of an apiserver's answer. */
export interface Refusal {
  kind: 'refuse';
  status: KubeStatus;
  cell: string;
  route: string;
  routeCase?: number;
  fenced?: boolean;
  headers?: Record<string, string>;
  /**
   * A write refused until its key's promotion: the key's CellBackup (its name) to mark for a promotion
   * first, once the caller is known to be allowed the write (destinations/promotion-requests.ts).
   */
  promote?: { readonly backup: string };
}

/** A read of a Down cell's object served from its backup, until the backup controller promotes it. */
export interface FromBackup {
  kind: 'backup';
  object: unknown;
  cell: string;
  route: 'failover-backup';
  routeCase?: number;
}

/** Where a single-object request goes, or the Status it gets instead. */
export type Destination =
  | { kind: 'cell'; client: KubeClient; cell: string; route: string; routeCase?: number }
  | FromBackup
  | Refusal;

export const refusal = (status: KubeStatus, route: string, cell = ''): Refusal => ({
  kind: 'refuse',
  status,
  cell,
  route,
});

/** What the access log, the span and the metrics record of a request sent to `destination`. */
export function outcomeOf(destination: Destination, code: number): RequestOutcome {
  return {
    code,
    cell: destination.cell,
    route: destination.route,
    ...(destination.routeCase ? { routeCase: destination.routeCase } : {}),
    ...(destination.kind === 'refuse' && destination.fenced ? { fenced: true } : {}),
  };
}
