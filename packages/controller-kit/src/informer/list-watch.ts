import {
  METADATA,
  METADATA_LIST,
  resourcePath,
  type ResourceRef,
  type KubeList,
  type KubeObject,
} from '@cellfed/federation';

import type { KubeClient } from '../kube/kube-client.ts';
import type { WatchEvent } from '../kube/watch-lines.ts';

export interface ListPage<T> {
  resourceVersion: string;
  continue?: string;
  items: T[];
}

/** Where an informer's objects come from; the real one is {@link resourceListWatch}, tests use fakes. */
export interface ListWatch<T extends KubeObject = KubeObject> {
  /** The source serves PartialObjectMetadata; the informer then keeps only compacted metadata. */
  readonly metadataOnly?: boolean;
  list(options: { limit: number; continue?: string; signal: AbortSignal }): Promise<ListPage<T>>;
  watch(options: {
    resourceVersion: string;
    timeoutSeconds: number;
    signal: AbortSignal;
  }): Promise<AsyncIterable<WatchEvent<T>>>;
}

export interface ResourceListWatchOptions {
  /** Only this namespace; all namespaces when absent. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Ask for PartialObjectMetadata only: names, labels, annotations, versions (no spec, no status). */
  metadataOnly?: boolean;
}

/** Lists and watches one resource of one apiserver, with bookmarks. */
export function resourceListWatch(
  client: KubeClient,
  ref: ResourceRef,
  options: ResourceListWatchOptions = {},
): ListWatch {
  const path = resourcePath(ref, options.namespace);
  const selectors = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  return {
    metadataOnly: options.metadataOnly === true,
    async list({ limit, continue: token, signal }) {
      const list = await client.request<KubeList>('GET', path, {
        query: { ...selectors, limit, continue: token },
        signal,
        ...(options.metadataOnly ? { accept: METADATA_LIST } : {}),
      });
      return {
        resourceVersion: list.metadata.resourceVersion ?? '',
        ...(list.metadata.continue ? { continue: list.metadata.continue } : {}),
        // An empty PartialObjectMetadataList comes with `items: null`.
        items: withTypeOf(list),
      };
    },
    watch({ resourceVersion, timeoutSeconds, signal }) {
      return client.watch(path, {
        query: { ...selectors, resourceVersion, timeoutSeconds, allowWatchBookmarks: true },
        signal,
        ...(options.metadataOnly ? { accept: METADATA } : {}),
      }) as Promise<AsyncIterable<WatchEvent<KubeObject>>>;
    },
  };
}

/**
 * The items of a list, each with its `apiVersion` and `kind`: kube-apiserver leaves them out of a JSON list's
 * items (the list says them once, as `DeploymentList`), while a watch event's object has them, and so must
 * every object the cache hands out (a copy elsewhere is written whole). client-go's unstructured lists do
 * the same.
 */
function withTypeOf(list: KubeList & { apiVersion?: string; kind?: string }): KubeObject[] {
  const items = list.items ?? [];
  const kind = list.kind?.endsWith('List') ? list.kind.slice(0, -'List'.length) : undefined;
  if (!kind || !list.apiVersion) return items;
  for (const item of items) {
    item.apiVersion ??= list.apiVersion;
    item.kind ??= kind;
  }
  return items;
}
