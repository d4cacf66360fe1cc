import { heldSpecPatch } from './held-spec.ts';

describe('heldSpecPatch', () => {
  it('sets back the suspend a moved Job or CronJob was created without', () => {
    expect(heldSpecPatch('{"suspend":false}')).toEqual({ suspend: false });
    expect(heldSpecPatch('{"suspend":null}')).toEqual({ suspend: null });
    expect(heldSpecPatch(undefined)).toBeUndefined();
  });

  it('never writes any other field, whatever the annotation holds (it is written past admission)', () => {
    expect(
      heldSpecPatch('{"suspend":false,"template":{"spec":{"hostNetwork":true}},"replicas":100}'),
    ).toEqual({ suspend: false });
    expect(heldSpecPatch('{"template":{"spec":{"hostNetwork":true}}}')).toEqual({});
    expect(heldSpecPatch('{"suspend":"false"}')).toEqual({});
    expect(heldSpecPatch('not json')).toEqual({});
    expect(heldSpecPatch('null')).toEqual({});
  });
});
