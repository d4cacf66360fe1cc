import {
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  MIGRATED_AT_ANNOTATION,
  ORIGIN_CREATED_ANNOTATION,
  ORIGIN_GENERATION_ANNOTATION,
  ORIGIN_UID_ANNOTATION,
  HELD_SPEC_ANNOTATION,
  PROMOTED_FROM_ANNOTATION,
} from '@cellfed/api';
import { type OwnerReference } from '@cellfed/federation';

/*
 * What the cell views (cell-view.ts, protobuf-view.ts) read of an object in its cell, and the annotations
 * cellfed keeps on it out of clients' sight (client-view.ts hides them).
 */

/** An object's labels and annotations as its cell stores them. */
export interface StoredMarks {
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

/** The object's owner references in its cell now; read only for writes that need them. */
export interface CellOwners {
  readonly native: OwnerReference[];
  readonly held: OwnerReference[];
  readonly resourceVersion: string | undefined;
  readonly hasAnnotations: boolean;
  /**
   * The annotations cellfed keeps on the object (see {@link KEPT_ANNOTATIONS}), which clients never see;
   * empty for an object never copied.
   */
  readonly identity: Readonly<Record<string, string>>;
  /** Its labels and annotations, to tell which marks an update changes (views/reserved-marks.ts). */
  readonly marks?: StoredMarks;
  /** The whole object as stored (JSON), to apply a JSON patch's copies and moves to (views/reserved-marks.ts). */
  readonly object?: unknown;
}

/**
 * The annotations cellfed keeps on an object: a copy's identity (`cellfed.io/uid`, `cellfed.io/created`,
 * `cellfed.io/generation`) and
 * the marks of a move (`copied-from` and, on a Job or CronJob, `held-spec` on an uncommitted copy;
 * `fenced-at`, `migrated-at` on an old one) and of a promotion not committed yet (`promoted-from`).
 * Clients never see them, and no client write sets or removes them: an update gets the object's own back.
 * (A client that wrote back a `copied-from` it read before the commit would make the object look like an
 * uncommitted copy, which goes when its source does.)
 */
export const KEPT_ANNOTATIONS = [
  ORIGIN_UID_ANNOTATION,
  ORIGIN_CREATED_ANNOTATION,
  ORIGIN_GENERATION_ANNOTATION,
  COPIED_FROM_ANNOTATION,
  FENCED_AT_ANNOTATION,
  MIGRATED_AT_ANNOTATION,
  PROMOTED_FROM_ANNOTATION,
  HELD_SPEC_ANNOTATION,
] as const;

/** The kept annotations among `annotations`. */
export function keptOf(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const identity: Record<string, string> = {};
  for (const key of KEPT_ANNOTATIONS) {
    const value = annotations?.[key];
    if (typeof value === 'string') identity[key] = value;
  }
  return identity;
}

/** Reads {@link CellOwners}; undefined when the object does not exist in the cell. */
export type CellOwnersReader = () => Promise<CellOwners | undefined>;

/** A write body as the cell takes it; undefined when it is the same as the client's. */
export interface CellWrite {
  readonly body: Buffer;
}
