import { parseArgs } from 'node:util';

import { ControllerKitError, ControllerKitErrorCode } from '../errors.ts';

/**
 * One command-line flag, declared once: a binary's parseArgs options, its usage text and the flags table of
 * its README all come from its list of these (README tables are checked against it by a spec).
 */
export interface Flag {
  /** Without the dashes: `delete-after`. */
  readonly name: string;
  /** What its value is, in the usage: `DURATION`, `N`, `FILE`. */
  readonly value: string;
  /** What it does, one sentence; the usage wraps it. */
  readonly help: string;
  /** Shown as `(default …)`: a value, or what happens without the flag. */
  readonly default?: string;
}

/** The flag's help with its default, as the usage and the README show it. */
function flagHelp(flag: Flag): string {
  return flag.default === undefined ? flag.help : `${flag.help} (default ${flag.default})`;
}

const USAGE_WIDTH = 110;

/** The usage lines of `flags`: `  --name VALUE   help (default …)`, the help wrapped in a column. */
export function usageOf(flags: readonly Flag[]): string {
  const heads = flags.map((flag) => `  --${flag.name} ${flag.value}`);
  const column = Math.max(...heads.map((head) => head.length)) + 2;
  return flags
    .map((flag, i) => {
      const lines = wrap(flagHelp(flag), USAGE_WIDTH - column);
      return [
        heads[i]!.padEnd(column) + lines[0],
        ...lines.slice(1).map((line) => ' '.repeat(column) + line),
      ].join('\n');
    })
    .join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line];
}

/** Whether the command line asks for the usage (`--help`, `-h`): printed to stdout, exit 0. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/**
 * Reads `argv` for exactly `flags`, every value as text (the binary's zod schema checks them). Throws one
 * readable line for an unknown flag or a missing value.
 */
export function readFlags(
  argv: readonly string[],
  flags: readonly Flag[],
): Record<string, string | undefined> {
  try {
    return parseArgs({
      args: [...argv],
      strict: true,
      options: Object.fromEntries(flags.map((flag) => [flag.name, { type: 'string' as const }])),
    }).values as Record<string, string | undefined>;
  } catch (error) {
    throw new ControllerKitError(
      ControllerKitErrorCode.InvalidConfig,
      (error as Error).message.split('\n')[0]!,
      { cause: error },
    );
  }
}

/** One row of a README's flags table: the flag and its value, then its help with its default. */
export interface FlagRow {
  readonly flag: string;
  readonly meaning: string;
}

/** The rows a README's flags table must have for `flags`, in order. */
export function flagRows(flags: readonly Flag[]): FlagRow[] {
  return flags.map((flag) => ({ flag: `\`--${flag.name} ${flag.value}\``, meaning: flagHelp(flag) }));
}

/** The rows of the markdown table between `<!-- flags -->` and `<!-- /flags -->` in `markdown`. */
export function readmeFlagRows(markdown: string): FlagRow[] {
  const start = markdown.indexOf('<!-- flags -->');
  const end = markdown.indexOf('<!-- /flags -->');
  if (start < 0 || end < start) return [];
  return markdown
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2) // the header and its rule
    .map((line) => {
      const cells = line.split('|').map((cell) => cell.trim());
      return { flag: cells[1] ?? '', meaning: cells[2] ?? '' };
    });
}

/** The markdown table for `flags` (prettier aligns its columns). */
export function flagsTable(flags: readonly Flag[]): string {
  return [
    '| flag | meaning |',
    '| ---- | ------- |',
    ...flagRows(flags).map((row) => `| ${row.flag} | ${row.meaning} |`),
  ].join('\n');
}
