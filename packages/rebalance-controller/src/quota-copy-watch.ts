import {
  Informer,
  QUOTA_COPY_SELECTOR,
  parseKey,
  RESOURCE_QUOTAS,
  resourceListWatch,
  type CellAware,
  type EngagedCell,
  type ListWatch,
  type ResourceQuota,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface QuotaCopyWatchOptions {
  logger: Logger;
  registry: Registry;
  /** Called with a copy's namespace and name whenever it changes in any cell. */
  onChange: (namespace: string, name: string) => void;
}

/**
 * Watches the ResourceQuota copies cellfed keeps in each engaged cell (and only those), metadata only: a
 * change to one (its cell's quota controller counted a new use, a draw moved its share) queues its quota.
 * The quota reconciler reads the copies themselves.
 */
export class QuotaCopyWatch implements CellAware {
  private readonly options: QuotaCopyWatchOptions;

  constructor(options: QuotaCopyWatchOptions) {
    this.options = options;
  }

  engage(cell: EngagedCell): void {
    const informer = new Informer<ResourceQuota>({
      cell: cell.id,
      resource: 'v1/resourcequotas',
      listWatch: resourceListWatch(cell.client, RESOURCE_QUOTAS, {
        labelSelector: QUOTA_COPY_SELECTOR,
        metadataOnly: true,
      }) as ListWatch<ResourceQuota>,
      logger: this.options.logger,
      registry: this.options.registry,
    });
    informer.addHandler((event) => {
      const { namespace, name } = parseKey(event.key);
      this.options.onChange(namespace, name);
    });
    // Stopped with the cell's engagement.
    void informer.run(cell.signal);
  }
}
