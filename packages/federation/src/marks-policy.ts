import { COMPONENT_USERS_ANNOTATION, HELD_OWNERS_ANNOTATION, SHARD_BY_LABEL } from '@cellfed/api';

import { cel, cellPolicyObjects, everyResource, celUserIsOneOf } from './cell-policy.ts';
import type { KubeObject } from './kube-object.ts';

/**
 * cellfed's own marks (`cellfed.io/…` labels and annotations) steer its controllers, and they act on them as
 * cellfed's components: a forged `held-spec` is written into the spec past every admission rule at the next
 * commit, a forged `followed-from` escapes quotas. The router refuses a client's write of one (the cell
 * router's views/reserved-marks.ts), reading the write as the apiserver will. This policy is where the write
 * lands, so it judges the object as the cell will store it, whatever the encoding (JSON, YAML, protobuf,
 * CBOR), the kind of patch or the subresource (`/status` writes change metadata of some kinds): in every
 * cell, a create or update by anyone but cellfed's components and the cell's own controllers that sets or
 * changes a reserved mark in an object's metadata, or in a workload's pod template (which those controllers
 * copy onto what they make), is refused.
 *
 * What it lets through, and why:
 * - the marks a client may write (a namespace's `shard-by`) and the held owner references, which the
 *   router writes itself into a client's write, impersonating the client (the cell cannot tell them apart:
 *   the router alone guards that annotation);
 * - a mark an update keeps as stored (the router writes a copy's kept annotations back on every update);
 * - a mark's removal: it can only take cellfed's steering away from the writer's own object (a fenced copy
 *   refuses every write anyway: fence-policy.ts), and the router refuses it;
 * - the cell's controllers (kube-controller-manager and the ServiceAccounts of `kube-system`): they copy
 *   marks from what cellfed wrote (a Deployment's annotations onto its ReplicaSets, a Service's labels onto
 *   its EndpointSlices), and the cell's administrators (`system:masters`), who may delete this policy. A
 *   caller cannot be any of them through the router without the right to impersonate them.
 */
export const MARKS_POLICY_NAME = 'cellfed-reserved-marks';

const PREFIX = 'cellfed.io/';

const CLIENT_MARKS = `[${cel(SHARD_BY_LABEL)}, ${cel(HELD_OWNERS_ANNOTATION)}]`;
const CELL_CONTROLLERS_USER = 'system:kube-controller-manager';
const CELL_CONTROLLERS_GROUP = 'system:serviceaccounts:kube-system';
/** The cell's administrators: they may delete the policy itself, so nothing is kept from them. */
const CELL_ADMINS_GROUP = 'system:masters';

type MarkMap = 'labels' | 'annotations';
const MAPS: readonly MarkMap[] = ['labels', 'annotations'];

/**
 * Where an object carries metadata whose marks matter: its own, and its pod template's, whose labels and
 * annotations the cell's (exempt) controllers copy onto the ReplicaSets and Pods they make. `when`: the
 * resources that have that template (a CEL condition on the request).
 */
interface MarkedMetadata {
  readonly name: string;
  /** The field path of the metadata, from the object. */
  readonly path: readonly string[];
  readonly when?: string;
}

const LOCATIONS: readonly MarkedMetadata[] = [
  { name: 'Own', path: ['metadata'] },
  {
    name: 'Template',
    path: ['spec', 'template', 'metadata'],
    when: "(request.resource.group == 'apps' || (request.resource.group == 'batch' && request.resource.resource == 'jobs') || (request.resource.group == '' && request.resource.resource == 'replicationcontrollers'))",
  },
  {
    name: 'JobTemplate',
    path: ['spec', 'jobTemplate', 'spec', 'template', 'metadata'],
    when: "(request.resource.group == 'batch' && request.resource.resource == 'cronjobs')",
  },
];

/** `has()` of every step of `root.path.map`: false where any is missing, never an error. */
const present = (root: string, path: readonly string[]) =>
  path.map((_, i) => `has(${[root, ...path.slice(0, i + 1)].join('.')})`).join(' && ');

const at = (root: string, location: MarkedMetadata, map: MarkMap) => [root, ...location.path, map].join('.');

/** Whether the written object has `location`'s `map` (false for other resources, without reading it). */
const has = (location: MarkedMetadata, map: MarkMap) =>
  [location.when, present('object', [...location.path, map])].filter(Boolean).join(' && ');

/** A reserved key of the map a write may not set: not a client's, not kept as the object has it. */
const setMark = (location: MarkedMetadata, map: MarkMap) =>
  [
    `k.startsWith(${cel(PREFIX)}) && !(k in ${CLIENT_MARKS})`,
    `&& !(oldObject != null && ${present('oldObject', [...location.path, map])}`,
    `&& k in ${at('oldObject', location, map)} && ${at('oldObject', location, map)}[k] == ${at('object', location, map)}[k])`,
  ].join(' ');

const variableName = (location: MarkedMetadata, map: MarkMap) =>
  `set${location.name}${map[0]!.toUpperCase()}${map.slice(1)}`;

const CHECKS = LOCATIONS.flatMap((location) => MAPS.map((map) => ({ location, map })));

/**
 * The policy and its binding for one cell, exempting `componentUsers`, the user names cellfed's components
 * call the cell as. It matches creates and updates of every resource and subresource.
 */
export function marksPolicyObjects(componentUsers: readonly string[]): [KubeObject, KubeObject] {
  const [policy, binding] = cellPolicyObjects(MARKS_POLICY_NAME, {
    matchConstraints: { resourceRules: [everyResource(['CREATE', 'UPDATE'])] },
    matchConditions: [
      {
        name: 'not-cellfed-nor-the-cells-controllers',
        expression: [
          `!(${celUserIsOneOf(componentUsers)})`,
          `&& request.userInfo.username != ${cel(CELL_CONTROLLERS_USER)}`,
          `&& !(${cel(CELL_CONTROLLERS_GROUP)} in request.userInfo.groups)`,
          `&& !(${cel(CELL_ADMINS_GROUP)} in request.userInfo.groups)`,
        ].join(' '),
      },
      // Every other write pays this one look at its own metadata (and a workload's at its template's).
      {
        name: 'carries-a-reserved-mark',
        expression: CHECKS.map(
          ({ location, map }) =>
            `(${has(location, map)} && ${at('object', location, map)}.exists(k, k.startsWith(${cel(PREFIX)})))`,
        ).join(' || '),
      },
    ],
    variables: CHECKS.map(({ location, map }) => ({
      name: variableName(location, map),
      expression: `${has(location, map)} ? ${at('object', location, map)}.filter(k, ${setMark(location, map)}) : []`,
    })),
    validations: CHECKS.map(({ location, map }) => ({
      expression: `size(variables.${variableName(location, map)}) == 0`,
      messageExpression: `'${[...location.path, map].join('.')}[' + variables.${variableName(location, map)}[0] + ']: Forbidden: the ${PREFIX} prefix is reserved for cellfed'`,
      reason: 'Invalid',
    })),
  });
  policy.metadata.annotations = { [COMPONENT_USERS_ANNOTATION]: JSON.stringify([...componentUsers]) };
  return [policy, binding];
}

/** The component users a marks policy read from a cell exempts (its annotation); none if unreadable. */
export function exemptComponentUsers(policy: KubeObject | undefined): string[] {
  try {
    const users = JSON.parse(policy?.metadata.annotations?.[COMPONENT_USERS_ANNOTATION] ?? '[]') as unknown;
    return Array.isArray(users) ? users.filter((user): user is string => typeof user === 'string') : [];
  } catch {
    return [];
  }
}
