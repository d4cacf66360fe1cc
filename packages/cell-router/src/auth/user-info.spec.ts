import { unsafeIdentityField } from './user-info.ts';

describe('unsafeIdentityField', () => {
  const user = { username: 'jane', uid: 'u', groups: ['dev'], extra: { scopes: ['view'] } };

  it('accepts names of any script, spaces, commas and tabs', () => {
    expect(
      unsafeIdentityField({ ...user, username: 'José O’Brien, Jr.\tx', groups: ['équipe'] }),
    ).toBeUndefined();
  });

  it.each([
    ['user name', { username: 'jane\r\nImpersonate-Group: system:masters' }],
    ['uid', { uid: 'u\n1' }],
    ['group', { groups: ['dev', 'system:masters\u0000'] }],
    ['extra', { extra: { 'scopes\r': ['view'] } }],
    ['extra', { extra: { scopes: ['view\u007f'] } }],
    // The cell's HTTP parser trims these: it would act as `cellfed-backup-controller`, whom it exempts.
    ['user name', { username: 'cellfed-backup-controller ' }],
    ['user name', { username: '\tjane' }],
    ['group', { groups: [' system:masters'] }],
    ['uid', { uid: 'u ' }],
  ])('names the %s holding a control character or a space at either end', (field, change) => {
    expect(unsafeIdentityField({ ...user, ...change })).toBe(field);
  });
});
