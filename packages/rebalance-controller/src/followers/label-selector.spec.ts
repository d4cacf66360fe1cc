import { matchesSelector } from './label-selector.ts';

describe('matchesSelector', () => {
  const labels = { tier: 'limits', team: 'shop' };

  it('matches everything with an empty selector, labelled or not', () => {
    expect(matchesSelector({}, labels)).toBe(true);
    expect(matchesSelector({}, undefined)).toBe(true);
  });

  it('needs every matchLabels pair', () => {
    expect(matchesSelector({ matchLabels: { tier: 'limits' } }, labels)).toBe(true);
    expect(matchesSelector({ matchLabels: { tier: 'limits', team: 'pay' } }, labels)).toBe(false);
    expect(matchesSelector({ matchLabels: { tier: 'limits' } }, undefined)).toBe(false);
  });

  it('reads In, NotIn, Exists and DoesNotExist as apimachinery does (NotIn holds for a missing key)', () => {
    const one = (operator: string, key: string, values?: string[]) =>
      matchesSelector({ matchExpressions: [{ key, operator, ...(values ? { values } : {}) }] }, labels);
    expect(one('In', 'team', ['shop', 'pay'])).toBe(true);
    expect(one('In', 'team', ['pay'])).toBe(false);
    expect(one('In', 'zone', ['a'])).toBe(false);
    expect(one('NotIn', 'team', ['pay'])).toBe(true);
    expect(one('NotIn', 'team', ['shop'])).toBe(false);
    expect(one('NotIn', 'zone', ['a'])).toBe(true);
    expect(one('Exists', 'tier')).toBe(true);
    expect(one('Exists', 'zone')).toBe(false);
    expect(one('DoesNotExist', 'zone')).toBe(true);
    expect(one('DoesNotExist', 'tier')).toBe(false);
    expect(one('Gt', 'tier', ['1'])).toBe(false);
  });

  it('needs the labels and the expressions together', () => {
    const selector = {
      matchLabels: { tier: 'limits' },
      matchExpressions: [{ key: 'team', operator: 'In', values: ['pay'] }],
    };
    expect(matchesSelector(selector, labels)).toBe(false);
    expect(matchesSelector(selector, { tier: 'limits', team: 'pay' })).toBe(true);
  });
});
