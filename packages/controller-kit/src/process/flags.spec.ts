import { formatDuration } from './duration.ts';
import { flagRows, flagsTable, readFlags, readmeFlagRows, usageOf, wantsHelp, type Flag } from './flags.ts';

const FLAGS: Flag[] = [
  { name: 'window', value: 'N', help: 'objects moved at once at most', default: '32' },
  {
    name: 'delete-after',
    value: 'DURATION',
    help: 'how long an old copy stays after its move, a help long enough that the usage has to wrap it onto a second line',
  },
];

describe('declared flags', () => {
  it('make the usage: one column of help, wrapped, with the default', () => {
    const lines = usageOf(FLAGS).split('\n');
    expect(lines[0]).toBe(`${'  --window N'.padEnd(27)}objects moved at once at most (default 32)`);
    expect(lines).toHaveLength(3);
    expect(lines.every((line) => line.length <= 110)).toBe(true);
    expect(lines[2]!.startsWith(' '.repeat(27))).toBe(true);
  });

  it('are the only flags read, every problem in one line', () => {
    expect(readFlags(['--window', '8'], FLAGS)).toEqual({ window: '8' });
    expect(() => readFlags(['--windw', '8'], FLAGS)).toThrow(/^Unknown option '--windw'/);
    expect(() => readFlags(['--window'], FLAGS)).toThrow(/argument missing/);
    expect(wantsHelp(['--window', '8', '--help'])).toBe(true);
    expect(wantsHelp(['--window', '8'])).toBe(false);
  });

  it('make the README table that readmeFlagRows reads back, whatever prettier pads', () => {
    const padded = flagsTable(FLAGS)
      .split('\n')
      .map((line) => line.replace(/ \| /g, '     |   '))
      .join('\n');
    const readme = `# x\n\n<!-- flags -->\n\n${padded}\n\n<!-- /flags -->\n`;
    expect(readmeFlagRows(readme)).toEqual(flagRows(FLAGS));
    expect(readmeFlagRows('# no table')).toEqual([]);
  });

  it('show durations in the largest exact unit', () => {
    expect([10_000, 7_000, 90_000, 12 * 3_600_000, 250, 1_500].map(formatDuration)).toEqual([
      '10s',
      '7s',
      '90s',
      '12h',
      '250ms',
      '1500ms',
    ]);
  });
});
