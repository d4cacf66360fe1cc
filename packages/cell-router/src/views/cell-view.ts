import { load } from 'js-yaml';
import { APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH } from '@cellfed/federation';

import { mediaType } from '../request/object-name.ts';
import type { CellOwnersReader, CellWrite } from './cell-owners.ts';
import {
  ANNOTATIONS_POINTER,
  applyView,
  jsonPatchView,
  keepIdentityInJsonPatch,
  mergePatchView,
  objectView,
  strategicPatchView,
} from './write-views.ts';

/**
 * The cell view of a write: what a cell stores for what a client sends. A cell's garbage collector must never
 * see an owner it cannot find (see @cellfed/controller-kit's held-owners.ts), so owner references a client
 * writes are held in an annotation; those the cell's own controllers set stay native. views/client-view.ts
 * undoes this on the way out.
 */

/** How a write body changes the object, by HTTP method and content type. */
export type WriteShape = 'object' | 'merge-patch' | 'strategic-merge-patch' | 'json-patch' | 'apply';

export function writeShape(
  method: string | undefined,
  contentType: string | undefined,
): WriteShape | undefined {
  if (method === 'POST' || method === 'PUT') return 'object';
  if (method !== 'PATCH') return undefined;
  switch (mediaType(contentType)) {
    case MERGE_PATCH:
      return 'merge-patch';
    case STRATEGIC_MERGE_PATCH:
      return 'strategic-merge-patch';
    case JSON_PATCH:
      return 'json-patch';
    case APPLY_PATCH:
      return 'apply';
    default:
      return undefined;
  }
}

const OWNER_MARK = Buffer.from('ownerReferences');
const JSON_ESCAPE = Buffer.from('\\u');

/**
 * Whether a write body may name owner references, judged on its bytes without parsing it (most writes name
 * none): the key spelled out, or spelled with a JSON escape (`owner\u0052eferences` is the same key to the
 * apiserver), or any YAML (whose keys have escapes of their own).
 */
export function mayNameOwners(body: Buffer, contentType: string | undefined): boolean {
  return body.includes(OWNER_MARK) || body.includes(JSON_ESCAPE) || mediaType(contentType).includes('yaml');
}

/**
 * The cell view of a write's body (JSON or YAML; protobuf goes through views/cell-view-protobuf.ts). Reads
 * the cell's current owners only when the body changes owner references of an existing object.
 */
export async function cellViewOfWrite(
  shape: WriteShape,
  method: string | undefined,
  contentType: string | undefined,
  body: Buffer,
  current: CellOwnersReader,
): Promise<CellWrite | undefined> {
  // Most writes carry no owner references: only an update (which may be of a copy) and a patch that
  // replaces the annotations whole (kubectl rollout undo does) need a look.
  if (
    !mayNameOwners(body, contentType) &&
    !(shape === 'object' && method === 'PUT') &&
    !(shape === 'json-patch' && body.includes(`"${ANNOTATIONS_POINTER}"`))
  )
    return undefined;
  const parsed = parseBody(body, contentType);
  if (parsed === undefined) return undefined;
  let changed: unknown;
  switch (shape) {
    case 'object':
      changed = await objectView(parsed, method === 'POST' ? undefined : current);
      break;
    case 'apply':
      changed = applyView(parsed);
      break;
    case 'merge-patch':
      changed = await mergePatchView(parsed, current);
      break;
    case 'strategic-merge-patch':
      changed = await strategicPatchView(parsed, current);
      break;
    case 'json-patch': {
      const kept = await keepIdentityInJsonPatch(parsed, current);
      changed = (await jsonPatchView(kept, current)) ?? (kept === parsed ? undefined : kept);
      break;
    }
  }
  return changed === undefined ? undefined : { body: Buffer.from(JSON.stringify(changed)) };
}

/** A JSON or YAML write body, parsed; undefined when it is neither. */
export function parseBody(body: Buffer, contentType: string | undefined): unknown {
  const text = body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    // Apply bodies and some creates are YAML; anything else the cell answers for itself.
    if (!mediaType(contentType).includes('yaml')) return undefined;
    try {
      return load(text, { json: true });
    } catch {
      return undefined;
    }
  }
}
