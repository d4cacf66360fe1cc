import {
  Informer,
  parseKey,
  resourceListWatch,
  type CellAware,
  type EngagedCell,
} from '@cellfed/controller-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { resourceId, type ResourceRef } from '@cellfed/federation';

export interface CopyWatchOptions {
  /** The resource of the copies, and the label that marks them as cellfed's. */
  resource: ResourceRef;
  labelSelector: string;
  logger: Logger;
  registry: Registry;
  /** Called with a copy's namespace and name whenever it changes in any cell. */
  onChange: (namespace: string, name: string) => void;
}

/**
 * Watches the copies cellfed keeps of control-plane objects in each engaged cell (and only those), metadata
 * only: a change to one (its cell's controller counted it again, a draw moved a quota's share) queues the
 * control-plane object, whose reconciler reads the copies themselves.
 */
export class CopyWatch implements CellAware {
  private readonly options: CopyWatchOptions;

  constructor(options: CopyWatchOptions) {
    this.options = options;
  }

  engage(cell: EngagedCell): void {
    const { resource, labelSelector } = this.options;
    const informer = new Informer({
      cell: cell.id,
      resource: resourceId(resource),
      listWatch: resourceListWatch(cell.client, resource, { labelSelector, metadataOnly: true }),
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
