import { HELD_OWNERS_ANNOTATION, SHARD_BY_LABEL } from '@cellfed/api';

import type { KubeObject } from './kube-object.ts';

/**
 * cellfed's own marks (`cellfed.io/…` labels and annotations) steer its controllers, and they act on them as
 * cellfed's components: a forged `held-spec` is written into the spec past every admission rule at the next
 * commit, a forged `followed-from` escapes quotas. The router refuses a client's write of one (the cell
 * router's views/reserved-marks.ts), reading the write as the apiserver will. This policy is where the write
 * lands, so it judges the object as the cell will store it, whatever the encoding (JSON, YAML, protobuf,
 * CBOR), the kind of patch or the subresource (`/status` writes change metadata of some kinds): in every
 * cell, a create or update by anyone but cellfed's components and the cell's own controllers that sets or
 * changes a reserved mark is refused.
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
 *   its EndpointSlices). A caller cannot be them through the router without the right to impersonate them.
 */
export const MARKS_POLICY_NAME = 'cellfed-reserved-marks';

const POLICIES = 'admissionregistration.k8s.io/v1';
const MANAGED = { 'app.kubernetes.io/managed-by': 'cellfed-rebalance-controller' };
const PREFIX = 'cellfed.io/';

/** A Go-style quoted string is also a CEL string literal. */
const cel = (text: string) => JSON.stringify(text);

const CLIENT_MARKS = `[${cel(SHARD_BY_LABEL)}, ${cel(HELD_OWNERS_ANNOTATION)}]`;
const CELL_CONTROLLERS_USER = 'system:kube-controller-manager';
const CELL_CONTROLLERS_GROUP = 'system:serviceaccounts:kube-system';

type MarkMap = 'labels' | 'annotations';
const MAPS: readonly MarkMap[] = ['labels', 'annotations'];

/** A reserved key of `object.metadata.<map>` a write may not set: not a client's, not kept as stored. */
const setMark = (map: MarkMap) =>
  [
    `k.startsWith(${cel(PREFIX)}) && !(k in ${CLIENT_MARKS})`,
    `&& !(oldObject != null && has(oldObject.metadata) && has(oldObject.metadata.${map})`,
    `&& k in oldObject.metadata.${map} && oldObject.metadata.${map}[k] == object.metadata.${map}[k])`,
  ].join(' ');

const variableName = (map: MarkMap) => `set${map[0]!.toUpperCase()}${map.slice(1)}`;

/**
 * The policy and its binding for one cell, exempting `componentsUser`, the user cellfed's components call the
 * cell as. It matches creates and updates of every resource and subresource.
 */
export function marksPolicyObjects(componentsUser: string): [KubeObject, KubeObject] {
  const policy = {
    apiVersion: POLICIES,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: MARKS_POLICY_NAME, labels: MANAGED },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['*'],
            apiVersions: ['*'],
            resources: ['*/*'],
            operations: ['CREATE', 'UPDATE'],
            scope: '*',
          },
        ],
      },
      matchConditions: [
        {
          name: 'not-cellfed-nor-the-cells-controllers',
          expression: [
            `request.userInfo.username != ${cel(componentsUser)}`,
            `&& request.userInfo.username != ${cel(CELL_CONTROLLERS_USER)}`,
            `&& !(${cel(CELL_CONTROLLERS_GROUP)} in request.userInfo.groups)`,
          ].join(' '),
        },
        // Every other write pays this one look at its own metadata.
        {
          name: 'carries-a-reserved-mark',
          expression: MAPS.map(
            (map) =>
              `(has(object.metadata) && has(object.metadata.${map}) && object.metadata.${map}.exists(k, k.startsWith(${cel(PREFIX)})))`,
          ).join(' || '),
        },
      ],
      variables: MAPS.map((map) => ({
        name: variableName(map),
        expression: `has(object.metadata.${map}) ? object.metadata.${map}.filter(k, ${setMark(map)}) : []`,
      })),
      validations: MAPS.map((map) => ({
        expression: `size(variables.${variableName(map)}) == 0`,
        messageExpression: `'metadata.${map}[' + variables.${variableName(map)}[0] + ']: Forbidden: the ${PREFIX} prefix is reserved for cellfed'`,
        reason: 'Invalid',
      })),
    },
  };
  const binding = {
    apiVersion: POLICIES,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: MARKS_POLICY_NAME, labels: MANAGED },
    spec: { policyName: MARKS_POLICY_NAME, validationActions: ['Deny'] },
  };
  return [policy, binding];
}
