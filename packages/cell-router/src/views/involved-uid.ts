import type { CellularResource } from '../routing/cellular-resources.ts';

/** The field selectors that name an Event's object by uid: core Events', events.k8s.io's. */
const UID_FIELDS = ['involvedObject.uid', 'regarding.uid'];

/**
 * A list of Events by their object's uid, as `kubectl describe` asks for them. A moved object has another
 * uid in its cell than the one clients know, and so do the events its cell's controllers record about it,
 * so the cells cannot match the uid: each cell is asked without it, and the router keeps the events that
 * show that uid once shown (views/owner-uids.ts).
 */
export interface InvolvedUidFilter {
  readonly uid: string;
  /** Whether an Event (JSON, as shown to the client) is about the object. */
  matches(json: Buffer | string): boolean;
}

/** The field selectors that name an Event's object by name. */
const NAME_FIELDS = ['involvedObject.name', 'regarding.name'];

/**
 * Takes the uid term out of the `fieldSelector` of an Events list (`query`, in place) and answers the
 * filter that replaces it; undefined (and `query` unchanged) for anything else, and for a Table, whose
 * rows carry only the Events' metadata. Only where another term names the object (as `kubectl describe`
 * does): a selector by uid alone is left to the cells, so a caller cannot make the router fetch every
 * Event of the federation to filter them (a moved object's own events, recorded under its uid in its new
 * cell, are then not found by that uid).
 */
export function takeInvolvedUid(
  resource: CellularResource,
  query: URLSearchParams,
  accept: string,
): InvolvedUidFilter | undefined {
  if (resource.resource !== 'events' || (resource.group !== '' && resource.group !== 'events.k8s.io'))
    return undefined;
  if (accept.includes('as=Table')) return undefined;
  const selector = query.get('fieldSelector');
  if (!selector) return undefined;
  const terms = selector.split(',');
  if (!terms.some((term) => NAME_FIELDS.some((field) => uidOf(term, field) !== undefined))) return undefined;
  const index = terms.findIndex((term) => UID_FIELDS.some((field) => uidOf(term, field) !== undefined));
  if (index < 0) return undefined;
  const term = terms[index]!;
  const uid = UID_FIELDS.map((field) => uidOf(term, field)).find((found) => found !== undefined)!;
  terms.splice(index, 1);
  if (terms.length > 0) query.set('fieldSelector', terms.join(','));
  else query.delete('fieldSelector');
  return {
    uid,
    matches(json) {
      let event: { involvedObject?: { uid?: unknown }; regarding?: { uid?: unknown } };
      try {
        event = JSON.parse(json.toString()) as typeof event;
      } catch {
        return false;
      }
      return (event.involvedObject ?? event.regarding)?.uid === uid;
    },
  };
}

function uidOf(term: string, field: string): string | undefined {
  for (const operator of ['==', '='])
    if (term.startsWith(`${field}${operator}`)) return term.slice(field.length + operator.length);
  return undefined;
}
