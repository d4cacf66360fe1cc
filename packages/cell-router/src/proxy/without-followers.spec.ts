import { withoutFollowers } from './without-followers.ts';

describe('withoutFollowers', () => {
  it('adds the selector that leaves follower copies out', () => {
    expect(withoutFollowers('/api/v1/namespaces/shop/configmaps')).toBe(
      '/api/v1/namespaces/shop/configmaps?labelSelector=%21cellfed.io%2Ffollowed-from',
    );
  });

  it('keeps the client’s selector and every other parameter, narrowed by it', () => {
    const narrowed = new URL(
      withoutFollowers(
        '/api/v1/namespaces/shop/configmaps?labelSelector=app%3Dweb&dryRun=All&gracePeriodSeconds=0',
      ),
      'http://x',
    );
    expect(narrowed.searchParams.get('labelSelector')).toBe('app=web,!cellfed.io/followed-from');
    expect(narrowed.searchParams.get('dryRun')).toBe('All');
    expect(narrowed.searchParams.get('gracePeriodSeconds')).toBe('0');
  });
});
