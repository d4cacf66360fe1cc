import { type KubeObject } from '@cellfed/federation';

/** Drops managedFields: a large share of every object's size that no controller here reads. */
export function stripManagedFields<T extends KubeObject>(object: T): T {
  if (object.metadata?.managedFields) delete object.metadata.managedFields;
  return object;
}

/**
 * Shares one copy of strings that repeat across objects (namespaces, label and annotation values, owner
 * kinds): JSON.parse makes a fresh string for every value, and in a cache of 100k objects the copies
 * add up. Bounded, so unique values (hashes, ids) cannot grow it without limit.
 */
export class StringInterner {
  private readonly strings = new Map<string, string>();
  private readonly limit: number;

  constructor(limit = 50_000) {
    this.limit = limit;
  }

  intern(value: string): string {
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    if (this.strings.size < this.limit) this.strings.set(value, value);
    return value;
  }

  internValues(record: Record<string, string> | undefined): void {
    if (!record) return;
    for (const key of Object.keys(record)) record[key] = this.intern(record[key]!);
  }
}

/**
 * For metadata-only informers: keeps `metadata` alone (every item of a PartialObjectMetadataList repeats
 * the same kind and apiVersion), without managedFields, with repeated strings shared.
 */
export function compactMetadata(interner = new StringInterner()): <T extends KubeObject>(object: T) => T {
  return <T extends KubeObject>(object: T): T => {
    const metadata = object.metadata;
    delete metadata.managedFields;
    if (metadata.namespace) metadata.namespace = interner.intern(metadata.namespace);
    interner.internValues(metadata.labels);
    interner.internValues(metadata.annotations);
    return { metadata } as T;
  };
}
