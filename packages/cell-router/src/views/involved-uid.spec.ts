import { takeInvolvedUid } from './involved-uid.ts';

const EVENTS = { group: '', resource: 'events' };
const JSON_ACCEPT = 'application/json';

describe('takeInvolvedUid', () => {
  it('takes the uid out of what kubectl describe asks for and keeps the events that show it', () => {
    const query = new URLSearchParams({
      fieldSelector:
        'involvedObject.name=web,involvedObject.namespace=shop,involvedObject.kind=Deployment,involvedObject.uid=first',
    });
    const filter = takeInvolvedUid(EVENTS, query, JSON_ACCEPT)!;
    expect(filter.uid).toBe('first');
    expect(query.get('fieldSelector')).toBe(
      'involvedObject.name=web,involvedObject.namespace=shop,involvedObject.kind=Deployment',
    );
    expect(filter.matches(JSON.stringify({ involvedObject: { uid: 'first' } }))).toBe(true);
    expect(filter.matches(JSON.stringify({ involvedObject: { uid: 'copy' } }))).toBe(false);
    expect(filter.matches('not json')).toBe(false);
  });

  it('reads events.k8s.io’s regarding, with ==', () => {
    const query = new URLSearchParams({ fieldSelector: 'regarding.name==web,regarding.uid==first' });
    const filter = takeInvolvedUid({ group: 'events.k8s.io', resource: 'events' }, query, JSON_ACCEPT)!;
    expect(query.get('fieldSelector')).toBe('regarding.name==web');
    expect(filter.matches(Buffer.from(JSON.stringify({ regarding: { uid: 'first' } })))).toBe(true);
  });

  it('leaves a selector by uid alone to the cells: the router never fetches every Event to filter them', () => {
    const query = new URLSearchParams({ fieldSelector: 'involvedObject.uid=first' });
    expect(takeInvolvedUid(EVENTS, query, JSON_ACCEPT)).toBeUndefined();
    expect(query.get('fieldSelector')).toBe('involvedObject.uid=first');
  });

  it('leaves other resources, Tables, other selectors and a != alone', () => {
    const selector = 'involvedObject.uid=first';
    for (const [resource, accept] of [
      [{ group: 'apps', resource: 'replicasets' }, JSON_ACCEPT],
      [EVENTS, 'application/json;as=Table;v=v1;g=meta.k8s.io'],
    ] as const) {
      const query = new URLSearchParams({ fieldSelector: selector });
      expect(takeInvolvedUid(resource, query, accept)).toBeUndefined();
      expect(query.get('fieldSelector')).toBe(selector);
    }
    for (const fieldSelector of ['involvedObject.name=web', 'involvedObject.uid!=first']) {
      const query = new URLSearchParams({ fieldSelector });
      expect(takeInvolvedUid(EVENTS, query, JSON_ACCEPT)).toBeUndefined();
      expect(query.get('fieldSelector')).toBe(fieldSelector);
    }
    expect(takeInvolvedUid(EVENTS, new URLSearchParams(), JSON_ACCEPT)).toBeUndefined();
  });
});
