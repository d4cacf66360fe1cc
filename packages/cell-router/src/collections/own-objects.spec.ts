import { CONTROL_PLANE_SOURCE } from '../routing/cell-made-resources.ts';
import { ownObjectView } from './own-objects.ts';

const configMaps = { group: '', resource: 'configmaps' };
const endpoints = { group: '', resource: 'endpoints' };

describe('ownObjectView', () => {
  it('shows the control plane’s copy of what each apiserver makes for itself, never a cell’s', () => {
    expect(ownObjectView(configMaps, 'ring', CONTROL_PLANE_SOURCE, 'shop', 'kube-root-ca.crt')).toBe('show');
    expect(ownObjectView(configMaps, 'ring', 'cell-1', 'shop', 'kube-root-ca.crt')).toBe('hide');
    expect(ownObjectView(endpoints, 'anywhere', CONTROL_PLANE_SOURCE, 'default', 'kubernetes')).toBe('show');
    expect(ownObjectView(endpoints, 'anywhere', 'cell-2', 'default', 'kubernetes')).toBe('hide');
  });

  it('hides the control plane’s other objects of a ring-placed resource, and leaves the rest to the rule', () => {
    expect(ownObjectView(configMaps, 'ring', CONTROL_PLANE_SOURCE, 'shop', 'settings')).toBe('hide');
    expect(ownObjectView(configMaps, 'ring', 'cell-1', 'shop', 'settings')).toBe('route');
    // The control plane's own controllers make cell-made objects too (Events): the rule decides.
    expect(ownObjectView(endpoints, 'anywhere', CONTROL_PLANE_SOURCE, 'shop', 'web')).toBe('route');
  });
});
