import { enforcedLimits, type ResourceQuota } from './quota-copies.ts';

const copy = (hard: Record<string, string>, status?: ResourceQuota['status']): ResourceQuota => ({
  metadata: { name: 'team', namespace: 'shop' },
  spec: { hard },
  ...(status ? { status } : {}),
});

describe('enforcedLimits', () => {
  it('puts every limit in force on a copy its cell has not counted yet: it refuses until counted', () => {
    expect(enforcedLimits(copy({ pods: '2', 'requests.cpu': '1' }))).toEqual({
      pods: '2',
      'requests.cpu': '1',
    });
  });

  it('leaves a name just added out until the cell counts it, as one apiserver does', () => {
    const counted = copy({ pods: '1', 'requests.cpu': '1' }, { hard: { pods: '2' }, used: { pods: '1' } });
    expect(enforcedLimits(counted)).toEqual({ pods: '1' });
    const removed = copy(
      { pods: '1' },
      { hard: { pods: '2', secrets: '1' }, used: { pods: '1', secrets: '0' } },
    );
    expect(enforcedLimits(removed)).toEqual({ pods: '1' });
  });
});
