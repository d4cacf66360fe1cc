import { FederationErrorCode } from './errors.ts';
import {
  MILLI,
  UNIT,
  formatQuantity,
  formatResourceList,
  parseQuantity,
  parseResourceList,
  sameResourceList,
} from './quantity.ts';

describe('quantities', () => {
  it.each([
    ['0', 0n],
    ['1', UNIT],
    ['500m', 500n * MILLI],
    ['1.5', 1_500_000_000n],
    ['.5', 500_000_000n],
    ['2k', 2000n * UNIT],
    ['2E', 2n * 1000n ** 6n * UNIT],
    ['1Ei', 1024n ** 6n * UNIT],
    ['252Mi', 252n * 1024n ** 2n * UNIT],
    ['30Gi', 30n * 1024n ** 3n * UNIT],
    ['1e3', 1000n * UNIT],
    ['1E-3', MILLI],
    ['-2', -2n * UNIT],
    ['7n', 7n],
    // Finer than a nano-unit rounds up, as kube-apiserver rounds a quantity up to its scale.
    ['0.0000000001', 1n],
  ])('%s is %s nano-units', (text, value) => {
    expect(parseQuantity(text)).toBe(value);
  });

  it('stays exact past 2^53, where numbers would round', () => {
    const huge = parseQuantity('8Ei');
    expect(huge).toBe(8n * 1024n ** 6n * UNIT);
    expect(formatQuantity(huge + parseQuantity('1'), true)).toBe('9223372036854775809');
  });

  it.each([
    [0n, false, '0'],
    [500n * MILLI, false, '500m'],
    [3n * UNIT, false, '3'],
    [2000n * UNIT, false, '2k'],
    [1_500_000_000n, false, '1500m'],
    [252n * 1024n ** 2n * UNIT, true, '252Mi'],
    [1536n * UNIT, true, '1536'],
    [2048n * UNIT, true, '2Ki'],
    [-250n * MILLI, false, '-250m'],
  ])('%s nano-units (binary: %s) print as %s', (value, binary, text) => {
    expect(formatQuantity(value, binary)).toBe(text);
  });

  it('refuses what is not a quantity, with its stable code', () => {
    expect(() => parseQuantity('ten')).toThrow(
      expect.objectContaining({ code: FederationErrorCode.BadQuantity, message: 'not a quantity: "ten"' }),
    );
  });

  it('reads and writes resource lists, each shown as its limit is', () => {
    const values = parseResourceList({ memory: '1Gi', cpu: '1' });
    values.set('memory', values.get('memory')! / 2n);
    values.set('cpu', values.get('cpu')! / 2n);
    expect(formatResourceList(values, { memory: '1Gi', cpu: '1' })).toEqual({ cpu: '500m', memory: '512Mi' });
    expect(sameResourceList({ cpu: '1000m' }, { cpu: '1' })).toBe(true);
    expect(sameResourceList({ cpu: '1' }, { cpu: '1', pods: '0' })).toBe(false);
    expect(sameResourceList(undefined, {})).toBe(true);
  });
});
