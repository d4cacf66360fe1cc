import { HealthHysteresis } from './health-hysteresis.ts';

const run = (probes: boolean[], options = {}) => {
  const hysteresis = new HealthHysteresis(options);
  return probes.map((ok) => hysteresis.observe(ok) ?? '-');
};

describe('HealthHysteresis', () => {
  it('is Healthy after the first good probe of a new cell', () => {
    expect(run([true, true])).toEqual(['Healthy', '-']);
  });

  it('needs failureThreshold failures in a row to become Unhealthy', () => {
    expect(run([true, false, false, true, false, false, false, false])).toEqual([
      'Healthy',
      '-',
      '-',
      '-',
      '-',
      '-',
      'Unhealthy',
      '-',
    ]);
  });

  it('needs successThreshold successes in a row to recover', () => {
    expect(run([false, false, false, true, false, true, true, true], { successThreshold: 2 })).toEqual([
      '-',
      '-',
      'Unhealthy',
      '-',
      '-',
      '-',
      'Healthy',
      '-',
    ]);
  });
});
