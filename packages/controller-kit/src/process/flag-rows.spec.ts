import { z } from 'zod';

import {
  boolFlag,
  durationFlag,
  flagGroup,
  intFlag,
  optionalDurationFlag,
  positiveNumberFlag,
  textFlag,
} from './flag-rows.ts';
import { flagRows } from './flags.ts';

const group = flagGroup({
  window: intFlag('window', { help: 'at most', default: 32, max: 1000 }),
  rate: positiveNumberFlag('rate', { help: 'per second', defaultText: 'no limit' }),
  deleteAfterMs: durationFlag('delete-after', { help: 'keep', default: '12h' }),
  autoDownMs: optionalDurationFlag('auto-down-after', { help: 'mark Down', defaultText: 'never' }),
  follow: boolFlag('follow', { help: 'follow', default: true }),
  secret: textFlag('tls-secret', {
    value: 'NS/NAME',
    help: 'the Secret',
    pattern: /^[a-z-]+\/[a-z-]+$/,
    message: '--tls-secret must be NAMESPACE/NAME',
  }),
  host: textFlag('host', { value: 'HOST', help: 'address', default: '0.0.0.0' }),
});
const schema = z.object(group.shape).strict();
const parse = (values: Record<string, string>) => schema.safeParse(group.input(values));

describe('flag rows', () => {
  it('declare each flag once: its row for the usage and README, its default shown as declared', () => {
    expect(flagRows(group.flags)).toEqual([
      { flag: '`--window N`', meaning: 'at most (default 32)' },
      { flag: '`--rate N`', meaning: 'per second (default no limit)' },
      { flag: '`--delete-after DURATION`', meaning: 'keep (default 12h)' },
      { flag: '`--auto-down-after DURATION`', meaning: 'mark Down (default never)' },
      { flag: '`--follow BOOL`', meaning: 'follow (default true)' },
      { flag: '`--tls-secret NS/NAME`', meaning: 'the Secret' },
      { flag: '`--host HOST`', meaning: 'address (default 0.0.0.0)' },
    ]);
  });

  it('read absent flags as their defaults, typed', () => {
    expect(parse({})).toEqual({
      success: true,
      data: {
        window: 32,
        rate: undefined,
        deleteAfterMs: 12 * 3_600_000,
        autoDownMs: undefined,
        follow: true,
        secret: undefined,
        host: '0.0.0.0',
      },
    });
  });

  it('read given flags by their names into their settings', () => {
    const parsed = parse({
      window: '8',
      rate: '2.5',
      'delete-after': '90s',
      'auto-down-after': '1m',
      follow: 'false',
      'tls-secret': 'ns/name',
      host: '127.0.0.1',
    });
    expect(parsed.data).toEqual({
      window: 8,
      rate: 2.5,
      deleteAfterMs: 90_000,
      autoDownMs: 60_000,
      follow: false,
      secret: 'ns/name',
      host: '127.0.0.1',
    });
  });

  it.each([
    [{ window: '0' }, '--window must be at least 1'],
    [{ window: '1001' }, '--window must be at most 1000'],
    [{ window: '2.5' }, '--window must be a whole number'],
    [{ window: '' }, '--window must be a whole number'],
    [{ rate: '0' }, '--rate must be above 0'],
    [{ rate: 'fast' }, '--rate must be a number'],
    [{ rate: 'Infinity' }, '--rate must be a number'],
    [{ 'delete-after': '12' }, '--delete-after must be a duration such as 12h, 30s or 1h30m; got "12"'],
    [{ follow: 'yes' }, '--follow must be true or false; got "yes"'],
    [{ 'tls-secret': 'no-slash' }, '--tls-secret must be NAMESPACE/NAME'],
    [{ host: '' }, '--host must not be empty'],
  ])('refuse %j in the words of the command line', (values, message) => {
    expect(parse(values).error?.issues.map((issue) => issue.message)).toEqual([message]);
  });

  it('refuse a flag declared twice', () => {
    expect(() =>
      flagGroup({
        a: boolFlag('same', { help: 'a', default: true }),
        b: boolFlag('same', { help: 'b', default: false }),
      }),
    ).toThrow('flag --same is declared twice');
  });

  it('take 0 for a duration only where the flag says what 0 means, and show that in its help', () => {
    const target = durationFlag('fence-target', { help: 'stay under', default: '200ms', zero: 'off' });
    const targetGroup = flagGroup({ target });
    const zeroAllowed = z.object(targetGroup.shape).strict();
    const read = (text: string) => zeroAllowed.safeParse(targetGroup.input({ 'fence-target': text }));
    expect(read('0')).toEqual({ success: true, data: { target: 0 } });
    expect(read('0s')).toEqual({ success: true, data: { target: 0 } });
    expect(read('1s')).toEqual({ success: true, data: { target: 1000 } });
    expect(read('-1s').success).toBe(false);
    expect(read('zero').error?.issues.map((issue) => issue.message)).toEqual([
      '--fence-target must be a duration such as 12h, 30s or 1h30m, or 0; got "zero"',
    ]);
    expect(flagRows(targetGroup.flags)).toEqual([
      { flag: '`--fence-target DURATION`', meaning: 'stay under; 0: off (default 200ms)' },
    ]);
    // Without `zero`, 0 is refused as before.
    expect(parse({ 'delete-after': '0s' }).success).toBe(false);
    expect(parse({ 'delete-after': '0' }).success).toBe(false);
  });

  it('refuse a duration default that is not one, when the row is declared', () => {
    expect(() => durationFlag('resync', { help: 'x', default: '10' })).toThrow('--resync: default "10"');
  });
});
