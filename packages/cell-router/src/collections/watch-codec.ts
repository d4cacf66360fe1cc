import { watchEvents, type WatchEvent } from '@cellfed/controller-kit';

import { showObject, type ClientViewOptions } from '../views/client-view.ts';
import { isProtobuf, protobufStatusJson } from './protobuf-list.ts';
import {
  isProtobufObject,
  protobufFrame,
  protobufWatchEvents,
  protobufWithVersion,
} from './protobuf-watch.ts';
import type { WatchedObject } from './watched-object.ts';

/** The annotation of the BOOKMARK that ends a streaming list's initial events (KEP-3157). */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** How a merged watch reads its cells' streams and writes the client's: JSON lines, or protobuf frames. */
export interface WatchCodec {
  /** The events of a cell's watch. */
  events(body: AsyncIterable<Buffer>): AsyncIterable<WatchEvent>;
  /** A cell's refusal (its body) as the JSON text of its Status. */
  statusText(body: Buffer): string;
  /** An object as the client sees it, carrying the composite version. */
  shown(object: WatchedObject, resourceVersion: string, options: ClientViewOptions): WatchedObject;
  /** A BOOKMARK's object from a cell's own, at the composite version (ending the initial events, or not). */
  bookmark(cellBookmark: unknown, resourceVersion: string, initialEventsEnd: boolean): unknown;
  /** One event as written to the client. */
  frame(event: { type: string; object: unknown }): string | Buffer;
}

export const JSON_WATCH: WatchCodec = {
  events: (body) => watchEvents(body),
  statusText: (body) => body.toString('utf8'),
  shown(object, resourceVersion, options) {
    const copy = viewCopy(object);
    showObject(copy, options);
    copy.metadata = { ...copy.metadata, resourceVersion };
    // A Table event (kubectl get -w): its row's object carries the version too.
    for (const row of copy.rows ?? []) {
      if (row.object?.metadata) row.object.metadata.resourceVersion = resourceVersion;
    }
    return copy;
  },
  bookmark(cellBookmark, resourceVersion, initialEventsEnd) {
    const { kind, apiVersion } = cellBookmark as { kind?: string; apiVersion?: string };
    return {
      kind,
      apiVersion,
      metadata: {
        resourceVersion,
        ...(initialEventsEnd ? { annotations: { [INITIAL_EVENTS_END]: 'true' } } : {}),
      },
    };
  },
  frame: (event) => `${JSON.stringify(event)}\n`,
};

/**
 * A copy of a cell's watched object that the client view (which assigns metadata fields, never edits what
 * they hold) and the owner uids (which edit each owner reference) may change, leaving the event's object as
 * the cell sent it: the move tracker may hold it. Cloning only that, not the whole object, for each event
 * matters for a streaming list's thousands of initial events; a Table, whose rows are edited, is cloned.
 */
function viewCopy(object: WatchedObject): WatchedObject {
  if (object.rows) return structuredClone(object);
  const metadata = { ...object.metadata };
  if (Array.isArray(metadata.ownerReferences))
    metadata.ownerReferences = metadata.ownerReferences.map((owner) =>
      typeof owner === 'object' && owner !== null ? { ...owner } : owner,
    );
  return { ...object, metadata };
}

/**
 * Protobuf, for clients that accept nothing else: objects stay in their cells' bytes, edited on the wire
 * (identity view, composite version). Owner uids of what cells' controllers make are shown as stored.
 */
export const PROTOBUF_WATCH: WatchCodec = {
  events: (body) => protobufWatchEvents(body),
  statusText: (body) => (isProtobuf(body) ? protobufStatusJson(body) : body.toString('utf8')),
  shown(object, resourceVersion, options) {
    return isProtobufObject(object)
      ? protobufWithVersion(object, resourceVersion, { copies: options?.copies !== false })
      : object;
  },
  // A cell's own BOOKMARK keeps its kind, and its initial-events-end annotation when it is the last one.
  bookmark(cellBookmark, resourceVersion) {
    return isProtobufObject(cellBookmark) ? protobufWithVersion(cellBookmark, resourceVersion) : cellBookmark;
  },
  frame: (event) => protobufFrame(event),
};
