import { ROUTER_CELLSET_LABEL, LOADED_GENERATION_ANNOTATION } from '@cellfed/api';
import type { Logger } from 'pino';
import { APPLY_PATCH, routerLeaseName } from '@cellfed/federation';

import { realClock, sleep, type Clock } from '../clock.ts';
import { errorMessage } from '../errors.ts';
import { isNotFound } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { microTime } from '../leader/micro-time.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces';

export interface RouterLeasePublisherOptions {
  client: Pick<KubeClient, 'request'>;
  namespace: string;
  cellSetName: string;
  identity: string;
  logger: Logger;
  clock?: Clock;
  /** How long the Lease holds without renewal. Default 30 s. */
  leaseDurationSeconds?: number;
  /** How often it is renewed. Default 10 s. */
  renewIntervalMs?: number;
}

/**
 * One Lease per router replica in the control plane, saying which CellSet generation it routes with. It is
 * written at once when the generation changes and renewed while the replica runs; a clean stop deletes it.
 */
export class RouterLeasePublisher {
  private readonly options: RouterLeasePublisherOptions;
  private readonly clock: Clock;
  private readonly name: string;
  private generation: number | undefined;
  private written: Promise<void> = Promise.resolve();

  constructor(options: RouterLeasePublisherOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.name = routerLeaseName(options.identity);
  }

  /** Records the generation now loaded and publishes it (without waiting; a failure is retried on renewal). */
  publish(generation: number): Promise<void> {
    this.generation = generation;
    this.written = this.written.then(() => this.write());
    return this.written;
  }

  /** Renews until `signal` aborts, then deletes the Lease. */
  async run(signal: AbortSignal): Promise<void> {
    const interval = this.options.renewIntervalMs ?? 10_000;
    while (!signal.aborted) {
      if (this.generation !== undefined) await this.publish(this.generation);
      await sleep(this.clock, interval, signal);
    }
    await this.written;
    const { client, namespace } = this.options;
    await client.request('DELETE', `${LEASES}/${namespace}/leases/${this.name}`).catch((error: unknown) => {
      if (!isNotFound(error))
        this.options.logger.warn({ lease: this.name, err: errorMessage(error) }, 'router Lease not deleted');
    });
  }

  private async write(): Promise<void> {
    const { client, namespace, cellSetName, identity } = this.options;
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.name,
        namespace,
        labels: { [ROUTER_CELLSET_LABEL]: cellSetName, 'app.kubernetes.io/component': 'cell-router' },
        annotations: { [LOADED_GENERATION_ANNOTATION]: String(this.generation) },
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: this.options.leaseDurationSeconds ?? 30,
        renewTime: microTime(this.clock.now()),
      },
    };
    try {
      // Server-side apply: creates or updates in one call, whoever wrote last.
      await client.request('PATCH', `${LEASES}/${namespace}/leases/${this.name}`, {
        query: { fieldManager: 'cellfed-cell-router', force: true },
        body: JSON.stringify(lease),
        contentType: APPLY_PATCH,
      });
    } catch (error) {
      this.options.logger.warn(
        { lease: this.name, generation: this.generation, err: errorMessage(error) },
        'router Lease not written; retrying at the next renewal',
      );
    }
  }
}
