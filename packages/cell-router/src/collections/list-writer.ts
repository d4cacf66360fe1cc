import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { creationColumns, showJson } from '../views/client-view.ts';
import type { InvolvedUidFilter } from '../views/involved-uid.ts';
import { showOwnerUids, type OwnerUids } from '../views/owner-uids.ts';
import { showProtobufMessage } from '../views/protobuf-view.ts';
import { withShownVersion } from '../views/shown-version.ts';
import { encodeProtobufList, withProtobufItemVersion } from './protobuf-list.ts';
import type { StreamedAnswer } from './streamed-answer.ts';

/** How a merged list is written, item by item as the merge takes them: JSON (streamed) or protobuf. */
export interface ListWriter {
  /** Writes one item as a cell stores it, in the client view; false when the view leaves it out. */
  item(cell: string, item: Buffer | string): Promise<boolean>;
  /** Ends the list with its kind, its composite resourceVersion and continue token. */
  finish(list: ListShape & { resourceVersion: string; continue?: string | undefined }): Promise<void>;
}

export interface ListShape {
  readonly kind: string;
  readonly apiVersion: string;
}

export interface JsonListOptions {
  /** The Table's column definitions, when the cells answered Tables (`kubectl get`). */
  readonly columns?: unknown[] | undefined;
  readonly table: boolean;
  /** Whether the items may be moved copies (not for what cells' controllers make). */
  readonly copies: boolean;
  readonly ownerUids?: OwnerUids | undefined;
  readonly involved?: InvolvedUidFilter | undefined;
}

const ITEM_SEPARATOR = Buffer.from(',');

/**
 * Streams a JSON list (or Table): the cells' item bytes spliced in, re-encoded only where the view changes
 * them. The list's kind and metadata follow its items, as in a custom resource list: a streamed custom
 * resource list learns them from its cells last.
 */
export async function jsonListWriter(out: StreamedAnswer, options: JsonListOptions): Promise<ListWriter> {
  const { table, columns } = options;
  await out.write(table ? `{"columnDefinitions":${JSON.stringify(columns ?? [])},"rows":[` : `{"items":[`);
  const creationOfRows = table ? creationColumns(columns) : undefined;
  const view = { copies: options.copies, ...(creationOfRows ? { columns: creationOfRows } : {}) };
  let given = 0;
  return {
    async item(cell, stored) {
      let item = showJson(stored, view);
      if (options.ownerUids && cell !== CONTROL_PLANE_SOURCE)
        item = await showOwnerUids(options.ownerUids, cell, item);
      if (options.involved && !options.involved.matches(item)) return false;
      if (given > 0) await out.write(ITEM_SEPARATOR);
      await out.write(withShownVersion(item, cell));
      given += 1;
      return true;
    },
    async finish(list) {
      const { kind, apiVersion, resourceVersion, continue: token } = list;
      await out.write(
        `],"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},` +
          `"metadata":${JSON.stringify({ resourceVersion, ...(token ? { continue: token } : {}) })}}`,
      );
      out.end();
    },
  };
}

/**
 * Writes a protobuf list, for clients that accept nothing else: held whole (its envelope states its length
 * first), then written at once. Items get the identity view and composite versions; owner uids of what the
 * cells' controllers make are shown as the cells have them.
 */
export function protobufListWriter(out: StreamedAnswer, shape: ListShape, copies = true): ListWriter {
  const items: Buffer[] = [];
  const view = { copies, kind: shape.kind.replace(/List$/, '') };
  return {
    async item(cell, stored) {
      const item = typeof stored === 'string' ? Buffer.from(stored) : stored;
      items.push(withProtobufItemVersion(showProtobufMessage(item, view), cell));
      return Promise.resolve(true);
    },
    async finish({ resourceVersion, continue: token }) {
      await out.write(encodeProtobufList({ ...shape, resourceVersion, continue: token, items }));
      out.end();
    },
  };
}
