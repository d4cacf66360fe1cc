import { readFileSync } from 'node:fs';

import { CONTROLLER_FLAGS, flagRows, readmeFlagRows } from '@cellfed/controller-kit';

import { REBALANCE_FLAGS, parseRebalanceArgs } from './config.ts';

describe('parseRebalanceArgs', () => {
  it('has the documented defaults', () => {
    const config = parseRebalanceArgs([]);
    expect(config).toMatchObject({
      cellSetName: 'default',
      secretNamespace: 'cellfed-system',
      window: 32,
      fenceTargetMs: 200,
      deleteAfterMs: 12 * 3_600_000,
      mirrorResyncMs: 60_000,
      collectorResyncMs: 60_000,
      scanQps: 1000,
      followPodReferences: true,
      divideQuotas: true,
    });
    expect(config.ratePerSecond).toBeUndefined();
    expect(config.manager.leaderElection).toMatchObject({
      enabled: true,
      namespace: 'cellfed-system',
      name: 'cellfed-rebalance-controller-default',
    });
  });

  it('reads every flag', () => {
    const config = parseRebalanceArgs(
      '--cellset x --window 8 --rate 50 --delete-after 90s --mirror-resync 5s --collector-resync 7s --follow-pod-references false --divide-quotas false --leader-elect false --leader-elect-lease-duration 4s --leader-elect-renew-deadline 3s --leader-elect-retry-period 500ms --http-port 0'.split(
        ' ',
      ),
    );
    expect(config).toMatchObject({
      cellSetName: 'x',
      window: 8,
      ratePerSecond: 50,
      deleteAfterMs: 90_000,
      mirrorResyncMs: 5000,
      collectorResyncMs: 7000,
      followPodReferences: false,
      divideQuotas: false,
    });
    expect(config.manager.leaderElection).toMatchObject({
      enabled: false,
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 500,
      name: 'cellfed-rebalance-controller-x',
    });
  });

  it('takes --fence-target 0 as no adapting (the window stays at --window)', () => {
    expect(parseRebalanceArgs(['--fence-target', '0']).fenceTargetMs).toBe(0);
    expect(parseRebalanceArgs(['--fence-target', '1s']).fenceTargetMs).toBe(1000);
  });

  it.each([
    [['--fence-target', 'soon'], /--fence-target must be a duration such as 12h, 30s or 1h30m, or 0/],
    [['--window', '0'], /--window must be at least 1/],
    [['--window', 'many'], /--window must be a whole number/],
    [['--delete-after', '12'], /--delete-after must be a duration/],
    [['--rate=0'], /--rate must be above 0/],
    [['--rate=-1'], /--rate must be above 0/],
    [['--leader-elect', 'yes'], /--leader-elect must be true or false/],
    [['--follow-pod-references', 'no'], /--follow-pod-references must be true or false/],
    [['--divide-quotas', 'yes'], /--divide-quotas must be true or false/],
    [['--nope'], /Unknown option '--nope'/],
    [['--log-level', 'loud'], /--log-level must be one of fatal, error, warn, info, debug, trace/],
    [['--trace-sample-ratio', '2'], /--trace-sample-ratio must be a number from 0 to 1/],
    [['--otlp-endpoint', 'ftp://collector'], /--otlp-endpoint must be an http\(s\) URL/],
    [['--http-port', '70000'], /--http-port must be at most 65535/],
    [['--leader-elect-lease-duration', '1s'], /needs leaseDurationMs > renewDeadlineMs > retryPeriodMs/],
  ])('refuses %j with one readable line', (argv, message) => {
    expect(() => parseRebalanceArgs(argv)).toThrow(message);
  });
});

describe('the flags table in the README', () => {
  it('is the flags as declared, each with its help and default (npm run docs:flags writes it)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readmeFlagRows(readme)).toEqual(flagRows([...REBALANCE_FLAGS, ...CONTROLLER_FLAGS]));
  });
});
