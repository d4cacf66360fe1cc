import { FederationError, FederationErrorCode } from './errors.ts';

/** A typed work-queue key: named string fields, none holding a `/`. */
export type Key<F extends string> = { readonly [P in F]: string };

/**
 * The one way a work-queue key is written and read: a queue holds strings (so re-adds collapse and one
 * key never runs on two workers), reconcilers think in fields. Every key kind is an instance of this
 * codec, never a string joined by hand.
 */
export interface KeyCodec<F extends string> {
  /** The fields in order, joined by `/`: what an invalid key is said not to be. */
  readonly shape: string;
  format(key: Key<F>): string;
  /** Inverse of {@link format}; throws `CELLFED_FEDERATION_INVALID_KEY` for anything it did not write. */
  parse(text: string): Key<F>;
}

/**
 * A codec for keys of `fields` (e.g. `['cell', 'namespace', 'name']`), written `a/b/c`. Each field must be
 * non-empty unless listed in `mayBeEmpty` (a cluster-scoped object's namespace); none may hold a `/`, which
 * cell ids, namespaces, names and resource names never do.
 */
export function keyCodec<const F extends string>(
  fields: readonly F[],
  options: { mayBeEmpty?: readonly F[] } = {},
): KeyCodec<F> {
  const shape = fields.join('/');
  const optional = new Set<string>(options.mayBeEmpty ?? []);
  const invalid = (text: string) =>
    new FederationError(FederationErrorCode.InvalidKey, `work-queue key "${text}" is not ${shape}`);
  const check = (values: readonly string[], text: string) => {
    if (values.length !== fields.length) throw invalid(text);
    values.forEach((value, index) => {
      if (value.includes('/') || (value === '' && !optional.has(fields[index]!))) throw invalid(text);
    });
  };
  return {
    shape,
    format(key) {
      const values = fields.map((field) => key[field]);
      const text = values.join('/');
      check(values, text);
      return text;
    },
    parse(text) {
      const values = text.split('/');
      check(values, text);
      return Object.fromEntries(fields.map((field, index) => [field, values[index]!])) as Key<F>;
    },
  };
}
