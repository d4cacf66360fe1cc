import { parseLabelSelector, type LabelMatcher } from './label-selector.ts';
import type { HistoryEntry } from './resource-history.ts';

/**
 * Whether a watch gets a change: `yes`, `no`, or `unknown` when the history's metadata cannot tell (a field
 * selector on other fields, an object's labels before the history began).
 */
export type Relevance = 'yes' | 'no' | 'unknown';

/**
 * What a watch selects (its path's namespace, its label and field selectors), judged on a history entry as
 * the cell's own filtered watch judges the change: it gets a change when the object matches after it or, for
 * a MODIFIED, matched before it (then as a DELETED).
 */
export function watchScope(
  namespace: string | undefined,
  query: URLSearchParams,
): (entry: HistoryEntry) => Relevance {
  const labels = parseLabelSelector(query.get('labelSelector') ?? '');
  const fields = parseFieldSelector(query.get('fieldSelector') ?? '');
  return (entry) => {
    if (namespace !== undefined && namespace !== '' && entry.namespace !== namespace) return 'no';
    const byFields = fields(entry);
    if (byFields === 'no') return 'no';
    const byLabels = labelRelevance(labels, entry);
    if (byLabels === 'no') return 'no';
    return byFields === 'yes' && byLabels === 'yes' ? 'yes' : 'unknown';
  };
}

function labelRelevance(matcher: LabelMatcher | undefined, entry: HistoryEntry): Relevance {
  if (!matcher) return 'unknown';
  if (matcher(entry.labels)) return 'yes';
  if (entry.type !== 'MODIFIED') return 'no';
  if (entry.previousLabels === undefined) return 'unknown';
  return entry.previousLabels !== null && matcher(entry.previousLabels) ? 'yes' : 'no';
}

/**
 * A field selector's terms on `metadata.name` and `metadata.namespace` (what the history knows); any other
 * term leaves a change it does not rule out unknown. An unreadable selector decides nothing.
 */
function parseFieldSelector(selector: string): (entry: HistoryEntry) => Relevance {
  if (selector.trim() === '') return () => 'yes';
  const terms: { field: 'name' | 'namespace'; equal: boolean; value: string }[] = [];
  let other = false;
  for (const term of selector.split(',')) {
    const match = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
    if (!match) return () => 'unknown';
    const [, field, op, value] = match as unknown as [string, string, string, string];
    if (field === 'metadata.name' || field === 'metadata.namespace')
      terms.push({ field: field === 'metadata.name' ? 'name' : 'namespace', equal: op !== '!=', value });
    else other = true;
  }
  return (entry) => {
    for (const term of terms) if ((entry[term.field] === term.value) !== term.equal) return 'no';
    return other ? 'unknown' : 'yes';
  };
}

/**
 * Whether {@link watchScope} tells every change of the watch `yes` or `no` from a history entry: its field
 * selector names only `metadata.name` and `metadata.namespace`, and its label selector can be read.
 */
export function isExactScope(query: URLSearchParams): boolean {
  if (parseLabelSelector(query.get('labelSelector') ?? '') === undefined) return false;
  const fields = query.get('fieldSelector') ?? '';
  if (fields.trim() === '') return true;
  return fields.split(',').every((term) => /^\s*metadata\.(name|namespace)\s*(==|=|!=)/.test(term));
}
