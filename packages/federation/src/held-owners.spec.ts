import { HELD_OWNERS_ANNOTATION } from '@cellfed/api';
import {
  HeldOwnersError,
  formatHeldOwners,
  heldOwners,
  madeByItsCell,
  ownerReferencesOf,
  shownOwners,
  splitOwners,
  type OwnerReference,
} from './held-owners.ts';

const owner = (uid: string, extra: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: `web-${uid}`,
  uid,
  ...extra,
});

describe('held owner references', () => {
  it('round-trip through the annotation, fields in kube-apiserver order', () => {
    const owners = [owner('a', { controller: true, blockOwnerDeletion: true }), owner('b')];
    const text = formatHeldOwners([
      {
        blockOwnerDeletion: true,
        controller: true,
        uid: 'a',
        name: 'web-a',
        kind: 'Deployment',
        apiVersion: 'apps/v1',
      },
      owner('b'),
    ]);
    expect(text).toBe(formatHeldOwners(owners));
    expect(text.indexOf('"apiVersion"')).toBeLessThan(text.indexOf('"uid"'));
    expect(heldOwners({ [HELD_OWNERS_ANNOTATION]: text })).toEqual(owners);
  });

  it('are none without the annotation, and refuse an annotation that is not a list of references', () => {
    expect(heldOwners(undefined)).toEqual([]);
    expect(heldOwners({ other: 'x' })).toEqual([]);
    expect(() => heldOwners({ [HELD_OWNERS_ANNOTATION]: 'not json' })).toThrow(HeldOwnersError);
    expect(() => heldOwners({ [HELD_OWNERS_ANNOTATION]: '[{"kind":"Deployment"}]' })).toThrow(
      /not a list of owner references/,
    );
  });

  it('are shown after the native ones, once per uid', () => {
    expect(shownOwners([owner('a')], [owner('a', { name: 'other' }), owner('b')]).map((o) => o.uid)).toEqual([
      'a',
      'b',
    ]);
  });

  it('split a wanted list: what the cell has natively stays native, the rest is held', () => {
    const split = splitOwners([owner('a', { controller: true }), owner('b')], [owner('a'), owner('z')]);
    expect(split.native).toEqual([owner('a', { controller: true })]);
    expect(split.held).toEqual([owner('b')]);
  });

  it('read an object’s references, none when they are not a valid list', () => {
    expect(ownerReferencesOf({ ownerReferences: [owner('a')] })).toEqual([owner('a')]);
    expect(ownerReferencesOf({})).toEqual([]);
    expect(ownerReferencesOf({ ownerReferences: [{ uid: 'a' }] })).toEqual([]);
  });
});

describe('madeByItsCell', () => {
  it('is true only for a native controller reference', () => {
    expect(madeByItsCell({ ownerReferences: [owner('a', { controller: true })] })).toBe(true);
    // A client's references are held in the annotation; a native one that is not the controller is not.
    expect(madeByItsCell({ ownerReferences: [owner('a', { controller: false }), owner('b')] })).toBe(false);
    expect(madeByItsCell({ ownerReferences: [] })).toBe(false);
    expect(madeByItsCell({})).toBe(false);
    // What a protobuf reader passes: only the flags.
    expect(madeByItsCell({ ownerReferences: [{}, { controller: true }] })).toBe(true);
  });
});
