import { z } from 'zod';

import { parseDuration } from './duration.ts';
import type { Flag } from './flags.ts';

/**
 * A flag declared once: its name, value, help and default (the usage and the README table read these), and
 * the zod schema that reads its text — absent or as given — into the setting, with the default applied and
 * every problem worded for the command line. A binary's config schema is built from its rows
 * ({@link flagGroup}), so a default or a bound is written in one place.
 */
export interface FlagRow<T> extends Flag {
  readonly schema: z.ZodType<T, string | undefined>;
}

interface RowMeta {
  /** What the value is, in the usage (`N`, `DURATION`, `FILE`). */
  readonly value?: string;
  readonly help: string;
  /** Shown as the default instead of the value (`no limit`, `never; an operator decides`). */
  readonly defaultText?: string;
}

/** What a flag's text could not be read as, worded for the command line. */
class Problem {
  readonly message: string;

  constructor(message: string) {
    this.message = message;
  }
}

function row<T>(
  name: string,
  value: string,
  meta: RowMeta,
  shownDefault: string | undefined,
  read: (text: string) => T | Problem,
  absent: T,
): FlagRow<T> {
  const shown = meta.defaultText ?? shownDefault;
  const schema = z
    .string()
    .optional()
    .transform((text, ctx): T => {
      if (text === undefined) return absent;
      const setting = read(text);
      if (!(setting instanceof Problem)) return setting;
      ctx.addIssue({ code: 'custom', message: setting.message });
      return z.NEVER;
    }) as unknown as z.ZodType<T, string | undefined>;
  return {
    name,
    value: meta.value ?? value,
    help: meta.help,
    ...(shown === undefined ? {} : { default: shown }),
    schema,
  };
}

/** A whole number from `min` (1 unless given) to `max`. */
export function intFlag(
  name: string,
  meta: RowMeta & { readonly default: number; readonly min?: number; readonly max: number },
): FlagRow<number> {
  const min = meta.min ?? 1;
  return row(
    name,
    'N',
    meta,
    String(meta.default),
    (text) => {
      const n = Number(text);
      if (text.trim() === '' || !Number.isInteger(n)) return new Problem(`--${name} must be a whole number`);
      if (n < min) return new Problem(`--${name} must be at least ${min}`);
      if (n > meta.max) return new Problem(`--${name} must be at most ${meta.max}`);
      return n;
    },
    meta.default,
  );
}

/** A number above 0, or nothing when the flag is absent (`defaultText` says what that means). */
export function positiveNumberFlag(name: string, meta: RowMeta): FlagRow<number | undefined> {
  return row<number | undefined>(
    name,
    'N',
    meta,
    undefined,
    (text) => {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) return new Problem(`--${name} must be a number`);
      if (!(n > 0)) return new Problem(`--${name} must be above 0`);
      return n;
    },
    undefined,
  );
}

/** A number from 0 to 1. */
export function ratioFlag(name: string, meta: RowMeta & { readonly default: number }): FlagRow<number> {
  return row(
    name,
    'R',
    meta,
    String(meta.default),
    (text) => {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
        return new Problem(`--${name} must be a number from 0 to 1`);
      return n;
    },
    meta.default,
  );
}

const durationOf = (name: string, text: string, zero = false): number | Problem => {
  // `0` alone, as Go's time.ParseDuration takes it, where 0 means something (`zero`).
  const ms = zero && text === '0' ? 0 : parseDuration(text);
  if (ms === undefined || (ms === 0 && !zero))
    return new Problem(
      `--${name} must be a duration such as 12h, 30s or 1h30m${zero ? ', or 0' : ''}; got "${text}"`,
    );
  return ms;
};

/**
 * A Go-style duration (`12h`, `90s`, `1h30m`), in milliseconds; `default` is written the same way. Above 0,
 * unless `zero` is given: then 0 is allowed too (`0` or `0s`), and `zero` says what it means (the help shows it).
 */
export function durationFlag(
  name: string,
  meta: RowMeta & { readonly default: string; readonly zero?: string },
): FlagRow<number> {
  const fallback = parseDuration(meta.default);
  if (fallback === undefined) throw new Error(`--${name}: default "${meta.default}" is not a duration`);
  const help = meta.zero ? `${meta.help}; 0: ${meta.zero}` : meta.help;
  return row(
    name,
    'DURATION',
    { ...meta, help },
    meta.default,
    (text) => durationOf(name, text, meta.zero !== undefined),
    fallback,
  );
}

/** A duration in milliseconds, or nothing when the flag is absent (`defaultText` says what that means). */
export function optionalDurationFlag(name: string, meta: RowMeta): FlagRow<number | undefined> {
  return row<number | undefined>(
    name,
    'DURATION',
    meta,
    undefined,
    (text) => durationOf(name, text),
    undefined,
  );
}

/** `true` or `false`. */
export function boolFlag(name: string, meta: RowMeta & { readonly default: boolean }): FlagRow<boolean> {
  return row(
    name,
    'BOOL',
    meta,
    String(meta.default),
    (text) => {
      if (text !== 'true' && text !== 'false')
        return new Problem(`--${name} must be true or false; got "${text}"`);
      return text === 'true';
    },
    meta.default,
  );
}

interface TextMeta extends RowMeta {
  readonly value: string;
  readonly pattern?: RegExp;
  /** Said when the text does not match `pattern`. */
  readonly message?: string;
}

/** A non-empty text matching `pattern`, or `default` when absent. */
export function textFlag(name: string, meta: TextMeta & { readonly default: string }): FlagRow<string>;
/** A non-empty text matching `pattern`, or nothing when absent. */
export function textFlag(name: string, meta: TextMeta): FlagRow<string | undefined>;
export function textFlag(
  name: string,
  meta: TextMeta & { readonly default?: string },
): FlagRow<string | undefined> {
  return row<string | undefined>(
    name,
    meta.value,
    meta,
    meta.default,
    (text) => {
      if (text === '') return new Problem(`--${name} must not be empty`);
      if (meta.pattern && !meta.pattern.test(text))
        return new Problem(meta.message ?? `--${name} is malformed; got "${text}"`);
      return text;
    },
    meta.default,
  );
}

/** A binary's own flags, by setting: the rows, the zod shape of the settings, and the text to parse. */
export interface FlagGroup<R extends Record<string, FlagRow<unknown>>> {
  /** The rows, in declaration order: for the usage, the parser and the README table. */
  readonly flags: readonly Flag[];
  /** One zod field per setting, for the binary's config schema (`.extend(group.shape)`). */
  readonly shape: { readonly [K in keyof R]: R[K]['schema'] };
  /** Each setting's text from the command line's values (by flag name), for that schema. */
  input(values: Readonly<Record<string, string | undefined>>): { [K in keyof R]: string | undefined };
}

/** The settings a group's rows read, by setting. */
export type FlagSettings<G extends FlagGroup<Record<string, FlagRow<unknown>>>> = {
  [K in keyof G['shape']]: z.output<G['shape'][K]>;
};

/** Groups flag rows by the setting each one fills. */
export function flagGroup<R extends Record<string, FlagRow<unknown>>>(rows: R): FlagGroup<R> {
  const entries = Object.entries(rows) as [keyof R & string, FlagRow<unknown>][];
  const names = new Set<string>();
  for (const [, flag] of entries) {
    if (names.has(flag.name)) throw new Error(`flag --${flag.name} is declared twice`);
    names.add(flag.name);
  }
  return {
    flags: entries.map(([, { name, value, help, default: shown }]) => ({
      name,
      value,
      help,
      ...(shown === undefined ? {} : { default: shown }),
    })),
    shape: Object.fromEntries(entries.map(([key, flag]) => [key, flag.schema])) as FlagGroup<R>['shape'],
    input: (values) =>
      Object.fromEntries(entries.map(([key, flag]) => [key, values[flag.name]])) as {
        [K in keyof R]: string | undefined;
      },
  };
}
