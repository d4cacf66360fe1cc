import { parseLabelSelector } from './label-selector.ts';

describe('parseLabelSelector', () => {
  const labels = { app: 'web', tier: 'front', 'example.com/team': 'a', n: '7' };

  it.each([
    ['', true],
    ['app', true],
    ['!app', false],
    ['!missing', true],
    ['app=web', true],
    ['app==web', true],
    ['app = web', true],
    ['app=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (web, db)', true],
    ['app in (db)', false],
    ['missing in (x)', false],
    ['app notin (db)', true],
    ['missing notin (x)', true],
    ['app notin (web,db)', false],
    ['example.com/team=a', true],
    ['n>5', true],
    ['n<5', false],
    ['app>1', false],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['app in (web,db),tier', true],
    ['app=', false],
    ['empty=', true],
  ])('%j matches the labels: %s', (selector, expected) => {
    const matcher = parseLabelSelector(selector)!;
    expect(matcher).toBeDefined();
    expect(matcher({ ...labels, empty: '' })).toBe(expected);
  });

  it.each(['app=(', 'app in web', '=web', 'app===web', 'a b', 'app in (we b)', 'app,,tier'])(
    'cannot read %j',
    (selector) => {
      expect(parseLabelSelector(selector)).toBeUndefined();
    },
  );
});
