import { LOADED_GENERATION_ANNOTATION } from '@cellfed/api';

import { routerLeaseName, routersBehind, type RouterLease } from './router-presence.ts';

const lease = (name: string, generation: number, renewTime: string, duration = 30): RouterLease => ({
  metadata: { name, annotations: { [LOADED_GENERATION_ANNOTATION]: String(generation) } },
  spec: { holderIdentity: name, leaseDurationSeconds: duration, renewTime },
});

describe('routersBehind', () => {
  const now = Date.parse('2026-11-23T00:01:00Z');
  it('names live routers on an older generation, ignoring expired and malformed Leases', () => {
    const behind = routersBehind(
      [
        lease('current', 5, '2026-11-23T00:00:50.000000Z'),
        lease('old', 4, '2026-11-23T00:00:50.000000Z'),
        lease('crashed', 2, '2026-11-23T00:00:00.000000Z'),
        { metadata: { name: 'not-a-router' } },
      ],
      5,
      now,
    );
    expect(behind.map((router) => router.identity)).toEqual(['old']);
  });

  it('makes DNS-safe Lease names from replica identities', () => {
    expect(routerLeaseName('cellfed-router-7d9f-x2')).toBe('cell-router-cellfed-router-7d9f-x2');
    expect(routerLeaseName('My.Host-4242')).toBe('cell-router-my-host-4242');
    expect(routerLeaseName('x'.repeat(80)).length).toBeLessThanOrEqual(63);
  });
});
