import { objectFieldSpan } from './json-elements.ts';

const METADATA = Buffer.from('"metadata"');

/**
 * A list item as the merge needs it, from the bytes its cell wrote: only its `metadata` parsed (the key,
 * labels, creation time and owners the merge reads), not its spec, data or status, which are passed on as
 * the cell wrote them. An item whose metadata the scan does not find is parsed whole.
 */
export function itemWithMetadataOnly(item: Buffer): unknown {
  const span = objectFieldSpan(item, METADATA);
  if (!span) return JSON.parse(item.toString('utf8'));
  return { metadata: JSON.parse(item.toString('utf8', span[0], span[1])) as unknown };
}
