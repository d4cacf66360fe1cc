import {
  ApiError,
  errorMessage,
  realClock,
  sleep,
  type Clock,
  type KubeClient,
} from '@cellfed/controller-kit';
import { METADATA_LIST, resourcePath, type KubeList } from '@cellfed/federation';
import type { Logger } from 'pino';

import type { CellularResource } from '../routing/cellular-resources.ts';
import type { LabelsBefore } from './resource-history.ts';

/** Reads of the labels before a change: a transient failure is tried again this many times in all. */
const READ_ATTEMPTS = 3;

/**
 * An object's labels just before a change, read as the router from the source's storage at the version
 * before it: a list of that one name at `resourceVersionMatch=Exact` (kube-apiserver reads one key of etcd
 * at that revision, kept until its compaction, minutes). Only to order changes for filtered watches, never
 * served. A version compacted away (410) or a refusal is final; anything else is tried again, briefly.
 */
export function labelsBeforeReader(options: {
  resource: CellularResource & { readonly version: string };
  client: (source: string) => Pick<KubeClient, 'request'> | undefined;
  logger: Logger;
  clock?: Clock;
}): LabelsBefore {
  const { group, version, resource } = options.resource;
  const ref = { group, version, resource, namespaced: true };
  const clock = options.clock ?? realClock;
  return async (source, change) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const client = options.client(source);
        if (!client) throw new Error(`no client of ${source}`);
        const list = await client.request<KubeList>('GET', resourcePath(ref, change.namespace), {
          query: {
            fieldSelector: `metadata.name=${escapeFieldValue(change.name)}`,
            resourceVersion: String(change.version - 1),
            resourceVersionMatch: 'Exact',
          },
          accept: METADATA_LIST,
        });
        const [found] = list.items ?? [];
        return found ? (found.metadata.labels ?? {}) : null;
      } catch (error) {
        const final = error instanceof ApiError && error.statusCode < 500 && error.statusCode !== 429;
        if (!final && attempt < READ_ATTEMPTS) {
          await sleep(clock, 200 * 4 ** (attempt - 1));
          continue;
        }
        options.logger.warn(
          {
            cell: source,
            object: `${change.namespace}/${change.name}`,
            version: change.version,
            err: errorMessage(error),
          },
          'labels before a change not read: filtered watches wait for the cell',
        );
        throw error;
      }
    }
  };
}

/** A field selector's value as kube-apiserver reads it: a backslash, `,` and `=` escaped (fields.EscapeValue). */
function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}
