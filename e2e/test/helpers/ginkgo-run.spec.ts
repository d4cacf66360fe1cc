import { rerunFailed, type GinkgoRunOptions, type SpecOutcome } from './ginkgo-run.ts';

const OPTIONS = {
  bin: '/nowhere',
  kubeconfig: '/nowhere/kubeconfig',
  outputDir: '/nowhere/out',
  label: 'router-again',
  procs: 6,
  timeoutMinutes: 25,
  progress: () => undefined,
};
const passed: SpecOutcome = { state: 'passed', seconds: 1 };
const failed: SpecOutcome = { state: 'failed', seconds: 30, failure: 'context deadline exceeded' };

/** A stand-in for ginkgo: records what it was asked to run and answers `outcome` for each spec. */
function fakeRun(outcome: (spec: string) => SpecOutcome) {
  const asked: GinkgoRunOptions[] = [];
  const run = async (options: GinkgoRunOptions) => {
    asked.push(options);
    return new Map(options.specs.map((spec) => [spec, outcome(spec)]));
  };
  return { asked, run };
}

describe('rerunFailed', () => {
  it('runs nothing again when every spec passed', async () => {
    const { asked, run } = fakeRun(() => passed);
    const first = new Map([['a', passed]]);
    const result = await rerunFailed(OPTIONS, first, ['a'], run);
    expect(asked).toEqual([]);
    expect(result.flaky).toEqual([]);
    expect(result.outcomes.get('a')).toEqual(passed);
  });

  it('runs the failed specs once more, alone, and names those that passed the second time with their first failure', async () => {
    const { asked, run } = fakeRun((spec) => (spec === 'b' ? passed : failed));
    const first = new Map([
      ['a', passed],
      ['b', failed],
      ['c', { state: 'timedout', seconds: 60 }],
    ]);
    const result = await rerunFailed(OPTIONS, first, ['a', 'b', 'c'], run);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ specs: ['b', 'c'], procs: 2, label: 'router-again' });
    expect(result.flaky).toEqual([{ spec: 'b', first: 'failed', failure: 'context deadline exceeded' }]);
    // The second run's outcome stands: b passed, c failed again (a difference, as before).
    expect(result.outcomes.get('b')?.state).toBe('passed');
    expect(result.outcomes.get('c')?.state).toBe('failed');
    expect(result.outcomes.get('a')).toEqual(passed);
  });

  it('leaves out specs the first run did not reach, and those not asked about', async () => {
    const { asked, run } = fakeRun(() => passed);
    const first = new Map([
      ['b', failed],
      ['other-arm', failed],
    ]);
    const result = await rerunFailed(OPTIONS, first, ['a', 'b'], run);
    expect(asked[0]?.specs).toEqual(['b']);
    expect(result.outcomes.has('a')).toBe(false);
    expect(result.outcomes.get('other-arm')?.state).toBe('failed');
  });
});
