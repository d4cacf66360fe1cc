import { setTimeout as sleep } from 'node:timers/promises';

import { ApiError, type KubeClient } from '@cellfed/controller-kit';
import { MERGE_PATCH, METADATA_LIST, type KubeList, type KubeObject } from '@cellfed/federation';

export const DEPLOYMENTS = '/apis/apps/v1';
/** The annotation a writer stamps its sequence number into. */
export const SEQ = 'e2e.cellfed.io/seq';

/** A Deployment of no replicas (nothing to schedule: the suites test the control plane). */
export const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
    },
  },
});

/** The Deployments of `namespace` in one apiserver (or through the router): name → metadata. */
export async function deploymentsIn(
  client: KubeClient,
  namespace: string,
): Promise<Map<string, KubeObject['metadata']>> {
  const list = await client.request<KubeList>('GET', `${DEPLOYMENTS}/namespaces/${namespace}/deployments`, {
    accept: METADATA_LIST,
  });
  return new Map((list.items ?? []).map((item) => [item.metadata.name!, item.metadata]));
}

/**
 * Patches Deployments through the router the whole time, each object by one loop only, stamping a rising
 * number into SEQ, and remembers every write the router acknowledged and when. A refused write is either
 * retried after a fence (429, as client-go does; anything else fails the writer) or, with `skipRefused`,
 * counted and left for another (a cell unreachable, an object being restored).
 */
export function startWriter(
  client: KubeClient,
  namespace: string,
  names: readonly string[],
  loops: number,
  options: { skipRefused?: boolean } = {},
) {
  const acknowledged = new Map<string, { seq: number; at: number }[]>();
  const attempted = new Map<string, number>();
  let refused = 0;
  let stop = false;
  let seq = 0;
  const loop = async (part: number) => {
    const mine = names.filter((_, i) => i % loops === part);
    while (!stop) {
      const name = mine[Math.floor(Math.random() * mine.length)]!;
      const value = ++seq;
      attempted.set(name, value);
      for (;;) {
        try {
          await client.request('PATCH', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${name}`, {
            body: { metadata: { annotations: { [SEQ]: String(value) } } },
            contentType: MERGE_PATCH,
          });
          acknowledged.set(name, [...(acknowledged.get(name) ?? []), { seq: value, at: Date.now() }]);
          break;
        } catch (error) {
          refused++;
          if (options.skipRefused) {
            await sleep(100);
            break;
          }
          if (!(error instanceof ApiError && error.statusCode === 429)) throw error;
          await sleep(200);
        }
      }
    }
  };
  const running = Promise.all(Array.from({ length: loops }, (_, part) => loop(part)));
  return {
    /** Every acknowledged write per object, oldest first. */
    acknowledged,
    /** The last write tried per object. */
    attempted,
    refused: () => refused,
    writes: () => seq,
    stop: async () => {
      stop = true;
      await running;
    },
  };
}
