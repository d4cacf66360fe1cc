import { parseCellSetSpec, type CellSetSpecInput } from '@cellfed/api';
import { parseRequestInfo } from '../request/request-info.ts';
import { CONTROL_PLANE_SOURCE } from './cell-made-resources.ts';
import { collectionSources, planRoute, routingState, type RoutingState } from './route-plan.ts';

function state(cells: CellSetSpecInput['cells'], shardBy: 'name' | 'namespace' = 'name'): RoutingState {
  const spec = parseCellSetSpec({ cells, shardBy });
  return routingState(spec, 1);
}

const ref = (id: string) => ({ name: `${id}-kubeconfig` });
const stable = state([
  { id: 'a', state: 'Normal', kubeconfigSecretRef: ref('a') },
  { id: 'b', state: 'Normal', kubeconfigSecretRef: ref('b') },
  { id: 'c', state: 'Normal', kubeconfigSecretRef: ref('c') },
]);
const plan = (method: string, path: string, routing: RoutingState | undefined = stable, name?: string) =>
  planRoute(parseRequestInfo(method, path), routing, undefined, name);

describe('planRoute', () => {
  it('sends discovery, OpenAPI and other non-resource paths to the control plane', () => {
    for (const path of ['/api', '/apis/apps/v1', '/version', '/openapi/v3']) {
      expect(plan('GET', path)).toEqual({ kind: 'control-plane', reason: 'non-resource' });
    }
  });

  it('sends global resources to the control plane', () => {
    for (const path of [
      '/api/v1/namespaces/team',
      '/api/v1/namespaces/team/secrets/s',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x',
      '/api/v1/namespaces/team/serviceaccounts/builder',
    ]) {
      expect(plan('GET', path)).toEqual({ kind: 'control-plane', reason: 'not-cellular' });
    }
  });

  it('marks the requests for one Job that may be where another cell’s CronJob made it, never a create', () => {
    expect(plan('GET', '/apis/batch/v1/namespaces/team/jobs/nightly-1')).toMatchObject({
      kind: 'object',
      alsoMadeByCells: true,
    });
    expect(plan('DELETE', '/apis/batch/v1/namespaces/team/jobs/nightly-1')).toMatchObject({
      alsoMadeByCells: true,
    });
    expect(plan('POST', '/apis/batch/v1/namespaces/team/jobs', stable, 'nightly-1')).toMatchObject({
      kind: 'object',
      alsoMadeByCells: false,
    });
    expect(plan('GET', '/apis/apps/v1/namespaces/team/deployments/web')).toMatchObject({
      alsoMadeByCells: false,
    });
  });

  it('sends what every apiserver makes for itself to the control plane, never to a cell', () => {
    for (const [method, path] of [
      ['GET', '/api/v1/namespaces/team/configmaps/kube-root-ca.crt'],
      ['PUT', '/api/v1/namespaces/default/services/kubernetes'],
      ['GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication'],
      ['DELETE', '/apis/apps/v1/namespaces/kube-system/deployments/coredns'],
    ] as const) {
      expect(plan(method, path)).toEqual({ kind: 'control-plane', reason: 'cell-own' });
    }
    expect(plan('POST', '/api/v1/namespaces/team/configmaps', stable, 'kube-root-ca.crt')).toEqual({
      kind: 'control-plane',
      reason: 'cell-own',
    });
    // The same names elsewhere are ordinary objects.
    expect(plan('GET', '/api/v1/namespaces/team/services/kubernetes')).toMatchObject({ kind: 'object' });
  });

  it('routes a cellular object by namespace/name, so the Deployment and Service called web share a cell', () => {
    const deployment = plan('GET', '/apis/apps/v1/namespaces/team/deployments/web');
    const service = plan('DELETE', '/api/v1/namespaces/team/services/web');
    expect(deployment).toMatchObject({
      kind: 'object',
      access: 'read',
      decision: { key: 'team/web', case: 4 },
    });
    expect(service).toMatchObject({
      kind: 'object',
      access: 'write',
      decision: { key: 'team/web', case: 4 },
    });
    expect(deployment.kind === 'object' && service.kind === 'object' && deployment.decision.oldCell).toBe(
      service.kind === 'object' && service.decision.oldCell,
    );
  });

  it('routes subresources with their object, as writes unless read', () => {
    const object = plan('GET', '/apis/apps/v1/namespaces/team/deployments/web');
    const scale = plan('PATCH', '/apis/apps/v1/namespaces/team/deployments/web/scale');
    const status = plan('PUT', '/apis/apps/v1/namespaces/team/deployments/web/status');
    expect(scale).toMatchObject({ kind: 'object', access: 'write', info: { subresource: 'scale' } });
    expect(status).toMatchObject({ kind: 'object', access: 'write', info: { subresource: 'status' } });
    const cell = (p: typeof object) => (p.kind === 'object' ? p.decision.oldCell : undefined);
    expect(cell(scale)).toBe(cell(object));
    expect(cell(status)).toBe(cell(object));
  });

  it('asks for the body of a create without a name, then routes it once the name is known', () => {
    expect(plan('POST', '/apis/apps/v1/namespaces/team/deployments')).toMatchObject({ kind: 'name-in-body' });
    expect(plan('POST', '/apis/apps/v1/namespaces/team/deployments', stable, 'web')).toMatchObject({
      kind: 'object',
      access: 'write',
      info: { name: 'web' },
      decision: { key: 'team/web' },
    });
  });

  it('fans collections out to every cell', () => {
    for (const [method, path] of [
      ['GET', '/apis/apps/v1/namespaces/team/deployments'],
      ['GET', '/apis/apps/v1/deployments?watch=true'],
      ['GET', '/api/v1/namespaces/team/configmaps?fieldSelector=metadata.name%3Dweb'],
      ['DELETE', '/apis/batch/v1/namespaces/team/jobs'],
    ] as const) {
      expect(plan(method, path)).toMatchObject({ kind: 'all-cells', placement: 'ring' });
    }
  });

  it('looks for what the cells’ controllers make wherever it is, and reads its collections from the control plane too', () => {
    for (const path of [
      '/api/v1/namespaces/team/pods/web-5d8f-x2x9z',
      '/api/v1/namespaces/team/pods/web-5d8f-x2x9z/log',
      '/apis/apps/v1/namespaces/team/replicasets/web-5d8f',
      '/apis/apps/v1/namespaces/team/controllerrevisions/db-7c9',
      '/apis/discovery.k8s.io/v1/namespaces/team/endpointslices/web-abcde',
      '/api/v1/namespaces/team/endpoints/web',
      '/api/v1/namespaces/team/events/web.17a',
      '/apis/events.k8s.io/v1/namespaces/team/events/web.17a',
    ]) {
      const planned = plan('GET', path);
      expect(planned).toMatchObject({ kind: 'cell-made' });
      // A create, or an object no source holds, goes where the ring puts the name.
      const { name } = parseRequestInfo('GET', path) as { name: string };
      expect(planned).toHaveProperty(
        'ringCell',
        stable.table.route(stable.table.keyOf({ namespace: 'team', name })).newCell,
      );
    }
    expect(plan('GET', '/api/v1/pods?watch=1')).toMatchObject({ kind: 'all-cells', placement: 'anywhere' });
    expect(plan('POST', '/api/v1/namespaces/team/pods', stable, 'debug')).toMatchObject({
      kind: 'cell-made',
      info: { name: 'debug', verb: 'create' },
    });
    // Each cell's own kube-system Pods stay the control plane's business.
    expect(plan('GET', '/api/v1/namespaces/kube-system/pods/etcd-0')).toEqual({
      kind: 'control-plane',
      reason: 'cell-own',
    });
  });

  it('reads a collection in a system namespace from the control plane alone: it holds only what each apiserver makes', () => {
    for (const path of [
      '/api/v1/namespaces/kube-system/configmaps',
      '/api/v1/namespaces/kube-public/configmaps?watch=1',
      '/api/v1/namespaces/kube-system/pods',
    ]) {
      expect(plan('GET', path)).toMatchObject({ kind: 'all-cells', placement: 'control-plane' });
    }
    expect(plan('DELETE', '/api/v1/namespaces/kube-node-lease/configmaps')).toEqual({
      kind: 'control-plane',
      reason: 'cell-own',
    });
    expect(collectionSources(stable, 'control-plane', { group: '', resource: 'configmaps' })).toEqual([
      CONTROL_PLANE_SOURCE,
    ]);
    expect(plan('GET', '/api/v1/namespaces/team/configmaps')).toMatchObject({ kind: 'all-cells' });
  });

  it('reads a collection from the control plane too where it may hold what each apiserver makes for itself', () => {
    const state = stable;
    expect(collectionSources(state, 'ring', { group: '', resource: 'configmaps' })).toEqual([
      CONTROL_PLANE_SOURCE,
      ...state.liveCells,
    ]);
    expect(collectionSources(state, 'ring', { group: 'apps', resource: 'deployments' })).toEqual(
      state.liveCells,
    );
    expect(collectionSources(state, 'anywhere', { group: '', resource: 'pods' })).toEqual([
      CONTROL_PLANE_SOURCE,
      ...state.liveCells,
    ]);
  });

  it('routes a cell-made resource as the CellSet says when it lists it as cellular or shared', () => {
    const listing = (field: 'cellularResources' | 'sharedResources') =>
      routingState(
        parseCellSetSpec({
          cells: [{ id: 'a', state: 'Normal', kubeconfigSecretRef: ref('a') }],
          [field]: [{ group: '', version: 'v1', resource: 'pods' }],
        }),
        1,
      );
    expect(plan('GET', '/api/v1/namespaces/team/pods/p', listing('cellularResources'))).toMatchObject({
      kind: 'object',
    });
    expect(plan('GET', '/api/v1/namespaces/team/pods/p', listing('sharedResources'))).toEqual({
      kind: 'control-plane',
      reason: 'not-cellular',
    });
    expect(plan('GET', '/api/v1/namespaces/team/events/e', listing('cellularResources'))).toMatchObject({
      kind: 'cell-made',
    });
  });

  it('shards by namespace when the CellSet or the namespace label says so', () => {
    const byNamespace = state(
      [
        { id: 'a', state: 'Normal', kubeconfigSecretRef: ref('a') },
        { id: 'b', state: 'Normal', kubeconfigSecretRef: ref('b') },
      ],
      'namespace',
    );
    expect(plan('GET', '/api/v1/namespaces/team/configmaps/x', byNamespace)).toMatchObject({
      decision: { key: 'team' },
    });
    const labelled = planRoute(
      parseRequestInfo('GET', '/api/v1/namespaces/tenant/configmaps/x'),
      stable,
      (namespace) => (namespace === 'tenant' ? { 'cellfed.io/shard-by': 'namespace' } : undefined),
    );
    expect(labelled).toMatchObject({ decision: { key: 'tenant' } });
  });

  it('reports the rebalancing case while a cell joins', () => {
    const joining = state([
      { id: 'a', state: 'Normal', kubeconfigSecretRef: ref('a') },
      { id: 'b', state: 'Joining', kubeconfigSecretRef: ref('b') },
    ]);
    const cases = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const routed = plan('GET', `/api/v1/namespaces/team/configmaps/c-${i}`, joining);
      if (routed.kind === 'object') {
        cases.add(routed.decision.case);
        expect(routed.decision.oldCell).toBe('a');
      }
    }
    expect([...cases].sort()).toEqual([2, 4]);
  });

  it('refuses cellular requests until a CellSet is loaded, with a 503 Status', () => {
    // (Not through `plan`, whose default parameter would replace undefined with a state.)
    const unloaded = (path: string) => planRoute(parseRequestInfo('GET', path), undefined);
    expect(unloaded('/apis/apps/v1/namespaces/team/deployments/web')).toMatchObject({
      kind: 'reject',
      status: { kind: 'Status', code: 503, reason: 'ServiceUnavailable' },
    });
    expect(unloaded('/version')).toEqual({ kind: 'control-plane', reason: 'non-resource' });
  });
});
