import { HELD_OWNERS_ANNOTATION } from '@cellfed/api';
import { z } from 'zod';

const ownerReferenceSchema = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  name: z.string().min(1),
  uid: z.string().min(1),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

/** metav1.OwnerReference. */
export type OwnerReference = z.infer<typeof ownerReferenceSchema>;

const heldOwnersSchema = z.array(ownerReferenceSchema);

/** The annotation holds something that is not a list of owner references (edited in a cell by hand). */
export class HeldOwnersError extends Error {
  override readonly name = 'HeldOwnersError';
}

/** The owner references held in `annotations`; none when the annotation is absent. */
export function heldOwners(annotations: Readonly<Record<string, string>> | undefined): OwnerReference[] {
  const text = annotations?.[HELD_OWNERS_ANNOTATION];
  if (text === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HeldOwnersError(`annotation ${HELD_OWNERS_ANNOTATION} is not JSON`);
  }
  const parsed = heldOwnersSchema.safeParse(value);
  if (!parsed.success)
    throw new HeldOwnersError(
      `annotation ${HELD_OWNERS_ANNOTATION} is not a list of owner references: ${parsed.error.issues[0]?.message ?? ''}`,
    );
  return parsed.data;
}

/** {@link heldOwners}, with none for an annotation that does not parse (a write replaces it). */
export function heldOwnersOrNone(
  annotations: Readonly<Record<string, string>> | undefined,
): OwnerReference[] {
  try {
    return heldOwners(annotations);
  } catch (error) {
    if (error instanceof HeldOwnersError) return [];
    throw error;
  }
}

/** The annotation's value for `owners` (fields in kube-apiserver's order, so equal lists are equal text). */
export function formatHeldOwners(owners: readonly OwnerReference[]): string {
  return JSON.stringify(
    owners.map(({ apiVersion, kind, name, uid, controller, blockOwnerDeletion, ...rest }) => ({
      apiVersion,
      kind,
      name,
      uid,
      ...(controller === undefined ? {} : { controller }),
      ...(blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion }),
      ...rest,
    })),
  );
}

/** What a client sees: the cell's own references (set by its controllers) first, then the held ones. */
export function shownOwners(
  native: readonly OwnerReference[],
  held: readonly OwnerReference[],
): OwnerReference[] {
  const seen = new Set(native.map((owner) => owner.uid));
  return [...native, ...held.filter((owner) => !seen.has(owner.uid))];
}

/**
 * A client's wanted list split for a cell: references the cell already has natively stay native (its own
 * controllers set them, e.g. a CronJob's Job, and rely on them); every other one is held.
 */
export function splitOwners(
  wanted: readonly OwnerReference[],
  native: readonly OwnerReference[],
): { native: OwnerReference[]; held: OwnerReference[] } {
  const nativeUids = new Set(native.map((owner) => owner.uid));
  return {
    native: wanted.filter((owner) => nativeUids.has(owner.uid)),
    held: wanted.filter((owner) => !nativeUids.has(owner.uid)),
  };
}

/** Owner references as an object carries them (anything that is not a valid list counts as none). */
export function ownerReferencesOf(metadata: { ownerReferences?: unknown } | undefined): OwnerReference[] {
  const parsed = heldOwnersSchema.safeParse(metadata?.ownerReferences ?? []);
  return parsed.success ? parsed.data : [];
}

/**
 * Whether a copy was made by its own cell's controllers: it has a native controller owner reference. The
 * router holds every reference a client writes in an annotation, so the field holds only what the cell's
 * controllers set, as on the Jobs a CronJob starts. Such a copy belongs where it was made: it is never
 * moved or promoted elsewhere (it would run again there), and the router shows it from its cell wherever the
 * ring puts its name. Reads only the `controller` flags, so a protobuf reader can pass just those.
 */
export function madeByItsCell(metadata: {
  readonly ownerReferences?: readonly unknown[] | undefined;
}): boolean {
  return (
    metadata.ownerReferences?.some(
      (owner) => (owner as { controller?: unknown } | null)?.controller === true,
    ) ?? false
  );
}
