import type { Access, OldCopy } from '@cellfed/hashing';
import { isNotFound, realClock, type Clock, type KubeClient } from '@cellfed/controller-kit';
import { METADATA, type KubeObject } from '@cellfed/federation';

import { requestObjectPath } from '../request/object-path.ts';
import type { ResourceRequestInfo } from '../request/request-info.ts';
import { RouterError, RouterErrorCode } from '../errors.ts';

/**
 * The old copy's metadata for the routing rule's cases 1–3: one GET in the old cell with the router's own
 * identity. Reads may reuse an answer up to `ttlMs` old, so a burst of reads costs one GET; writes always
 * read afresh, so whether a write is fenced is decided on the label as it is now.
 */
export class OldCopies {
  private readonly cache = new Map<string, { at: number; copy: OldCopy }>();
  private readonly client: (cell: string) => Pick<KubeClient, 'request'> | undefined;
  private readonly clock: Clock;
  private readonly ttlMs: number;

  constructor(options: {
    client: (cell: string) => Pick<KubeClient, 'request'> | undefined;
    clock?: Clock;
    ttlMs?: number;
  }) {
    this.client = options.client;
    this.clock = options.clock ?? realClock;
    this.ttlMs = options.ttlMs ?? 1000;
  }

  async get(cell: string, info: ResourceRequestInfo, access: Access): Promise<OldCopy> {
    const key = `${cell}/${info.apiGroup}/${info.resource}/${info.namespace}/${info.name}`;
    const now = this.clock.now();
    const cached = this.cache.get(key);
    if (access === 'read' && cached && now - cached.at < this.ttlMs) return cached.copy;
    const client = this.client(cell);
    if (!client) throw new RouterError(RouterErrorCode.CellNotConnected, `cell ${cell} is not connected`);
    let copy: OldCopy;
    try {
      const object = await client.request<KubeObject>(
        'GET',
        requestObjectPath(info, info.namespace, info.name),
        {
          accept: METADATA,
        },
      );
      copy = { found: true, labels: object.metadata.labels };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      copy = { found: false };
    }
    this.cache.set(key, { at: now, copy });
    if (this.cache.size > 50_000) this.cache.delete(this.cache.keys().next().value!);
    return copy;
  }
}
