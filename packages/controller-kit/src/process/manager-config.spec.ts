import { ControllerKitErrorCode } from '../errors.ts';
import { parseManagerConfig } from './manager-config.ts';

describe('parseManagerConfig', () => {
  it('fills in defaults: a crashed leader is replaced within 12 s (lease 10 s, retry 2 s)', () => {
    expect(parseManagerConfig({})).toEqual({
      httpHost: '0.0.0.0',
      httpPort: 8080,
      logLevel: 'info',
      gracefulShutdownMs: 30_000,
      leaderElection: {
        enabled: true,
        namespace: 'cellfed-system',
        leaseDurationMs: 10_000,
        renewDeadlineMs: 7_000,
        retryPeriodMs: 2_000,
      },
    });
  });

  it('reports every problem in one line', () => {
    let message = '';
    try {
      parseManagerConfig({
        httpPort: 70000,
        logLevel: 'loud',
        leaderElection: { renewDeadlineMs: 20_000 },
        extra: 1,
      });
    } catch (error) {
      expect(error).toMatchObject({ code: ControllerKitErrorCode.InvalidConfig });
      message = (error as Error).message;
    }
    expect(message).not.toContain('\n');
    expect(message).toContain('httpPort:');
    expect(message).toContain('logLevel:');
    expect(message).toContain('leaderElection: needs leaseDurationMs > renewDeadlineMs > retryPeriodMs');
    expect(message).toContain('extra');
  });
});
