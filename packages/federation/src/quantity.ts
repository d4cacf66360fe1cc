import { FederationError, FederationErrorCode } from './errors.ts';

/**
 * Kubernetes resource quantities (`500m`, `252Mi`, `30Gi`, `1e3`), exactly: a value is a bigint count of
 * nano-units, so sums and shares of quota limits never round the way JavaScript numbers would past 2^53.
 */

/** A resource list as the API carries it: quantity strings by resource name. */
export type ResourceList = Record<string, string>;

/** One unit in nano-units. */
export const UNIT = 1_000_000_000n;
/** One milli-unit in nano-units. */
export const MILLI = 1_000_000n;

const DECIMAL: Record<string, bigint> = {
  n: 1n,
  u: 1000n,
  m: MILLI,
  '': UNIT,
  k: UNIT * 1000n,
  M: UNIT * 1000n ** 2n,
  G: UNIT * 1000n ** 3n,
  T: UNIT * 1000n ** 4n,
  P: UNIT * 1000n ** 5n,
  E: UNIT * 1000n ** 6n,
};
const BINARY: Record<string, bigint> = {
  Ki: UNIT * 1024n,
  Mi: UNIT * 1024n ** 2n,
  Gi: UNIT * 1024n ** 3n,
  Ti: UNIT * 1024n ** 4n,
  Pi: UNIT * 1024n ** 5n,
  Ei: UNIT * 1024n ** 6n,
};

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** Whether a quantity is written with a binary suffix (`Mi`, `Gi`): its sums are shown the same way. */
function isBinary(quantity: string): boolean {
  return /[KMGTPE]i$/.test(quantity.trim());
}

/**
 * A quantity in nano-units. Digits finer than a nano-unit round up, as kube-apiserver rounds a quantity
 * up to its smallest scale.
 */
export function parseQuantity(quantity: string): bigint {
  const match = QUANTITY.exec(quantity.trim());
  if (!match) throw new FederationError(FederationErrorCode.BadQuantity, `not a quantity: "${quantity}"`);
  const [, sign, number = '', suffix = ''] = match;
  const [whole = '', fraction = ''] = number.split('.');
  let scale: bigint;
  let exponent = 0;
  if (/^[eE][+-]?\d+$/.test(suffix)) {
    scale = UNIT;
    exponent = Number(suffix.slice(1));
  } else scale = BINARY[suffix] ?? DECIMAL[suffix] ?? UNIT;
  // value = (whole.fraction) × 10^exponent × scale, computed as an integer over 10^digits.
  const digits = BigInt(`${whole || '0'}${fraction}`);
  let numerator = digits * scale;
  let denominator = 10n ** BigInt(fraction.length);
  if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
  else denominator *= 10n ** BigInt(-exponent);
  const value = (numerator + denominator - 1n) / denominator;
  return sign === '-' ? -value : value;
}

/**
 * A nano-unit value as kube-apiserver would print it: with the largest binary suffix that divides it when
 * `binary`, otherwise the largest decimal one (`0`, `500m`, `3`, `2k`).
 */
export function formatQuantity(value: bigint, binary = false): string {
  if (value === 0n) return '0';
  const sign = value < 0n ? '-' : '';
  const magnitude = value < 0n ? -value : value;
  if (binary && magnitude % UNIT === 0n) {
    for (const suffix of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'])
      if (magnitude % BINARY[suffix]! === 0n) return `${sign}${magnitude / BINARY[suffix]!}${suffix}`;
    return `${sign}${magnitude / UNIT}`;
  }
  for (const suffix of ['E', 'P', 'T', 'G', 'M', 'k', '', 'm', 'u', 'n'])
    if (magnitude % DECIMAL[suffix]! === 0n) return `${sign}${magnitude / DECIMAL[suffix]!}${suffix}`;
  return `${sign}${magnitude}n`;
}

/** A resource list's quantities in nano-units; names with no quantity are absent. */
export function parseResourceList(list: ResourceList | undefined): Map<string, bigint> {
  const values = new Map<string, bigint>();
  for (const [name, quantity] of Object.entries(list ?? {})) values.set(name, parseQuantity(quantity));
  return values;
}

/**
 * Values back to a resource list, each shown as the quantity named the same in `like` is (binary or not),
 * in name order.
 */
export function formatResourceList(
  values: ReadonlyMap<string, bigint>,
  like: ResourceList = {},
): ResourceList {
  const list: ResourceList = {};
  for (const name of [...values.keys()].sort())
    list[name] = formatQuantity(values.get(name)!, isBinary(like[name] ?? ''));
  return list;
}

/** Whether two resource lists hold the same names with equal quantities (`1000m` equals `1`). */
export function sameResourceList(a: ResourceList | undefined, b: ResourceList | undefined): boolean {
  const left = parseResourceList(a);
  const right = parseResourceList(b);
  if (left.size !== right.size) return false;
  for (const [name, value] of left) if (right.get(name) !== value) return false;
  return true;
}
