import type { GroupVersionResource } from './cell-set.ts';

/**
 * What a cell's own controllers make for the workloads it runs: a Deployment's ReplicaSets and their Pods, a
 * StatefulSet's ControllerRevisions, a Service's Endpoints and EndpointSlices, the Events about all of them.
 * They are born in the cell of their owner under names the router never sees chosen, so the ring does not
 * place them and the rebalance controller does not move them (the owner's new cell makes its own). The
 * router finds them where they are: each of them in every live cell and the control plane (whose own
 * controllers write Events too). A resource the CellSet lists as cellular or shared is routed as listed.
 */
export const CELL_MADE_RESOURCES: readonly Pick<GroupVersionResource, 'group' | 'resource'>[] = [
  { group: '', resource: 'pods' },
  { group: 'apps', resource: 'replicasets' },
  { group: 'apps', resource: 'controllerrevisions' },
  { group: '', resource: 'endpoints' },
  { group: 'discovery.k8s.io', resource: 'endpointslices' },
  { group: '', resource: 'events' },
  { group: 'events.k8s.io', resource: 'events' },
];
