import { FENCE_PROBE_LABEL, FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION } from '@cellfed/api';
import { MIGRATED, MIGRATING, REBALANCE_STATUS_LABEL } from '@cellfed/hashing';

import { cel, cellPolicyObjects, everyResource, celUserIsOneOf } from './cell-policy.ts';
import type { KubeObject } from './kube-object.ts';

/**
 * The write fence, enforced in each cell as well as in the router: a ValidatingAdmissionPolicy that refuses
 * every write to an old copy labelled `migrating` or `migrated` except the rebalance controller's own. The
 * router decides on the label it read; a write it sent on a reading of "not started" can reach the cell
 * after the hand-over (a slow cell), and without this policy it would land on the inert old copy and be lost.
 * The cell applies it against the object as stored, atomically with the write.
 */
export const FENCE_POLICY_NAME = 'cellfed-rebalance-fence';

const FENCE_PROBE_NAME = 'cellfed-fence-probe';

const FENCED_VALUES = `[${cel(MIGRATING)}, ${cel(MIGRATED)}]`;
const STATUS = `oldObject.metadata.labels[${cel(REBALANCE_STATUS_LABEL)}]`;
const MARKED = `(${cel(FENCED_AT_ANNOTATION)} in oldObject.metadata.annotations || ${cel(MIGRATED_AT_ANNOTATION)} in oldObject.metadata.annotations)`;

/**
 * Only requests that concern a fenced copy (or the probe) reach the validation: every other update or delete
 * in the cell pays one cheap condition. A fenced copy has the label and the annotation the controller
 * writes with it: a cell's controllers copy labels alone onto what they make (a Service's onto its
 * Endpoints and EndpointSlices, which must keep working) and annotations alone (a Deployment's onto its
 * ReplicaSets), never both. A Scale (`/scale`) carries no labels, so scale writes are not covered.
 */
const MATCH = [
  `request.operation == 'CREATE'`,
  `? object.metadata.name == ${cel(FENCE_PROBE_NAME)} && has(object.metadata.labels) && ${cel(FENCE_PROBE_LABEL)} in object.metadata.labels`,
  `: oldObject != null && has(oldObject.metadata) && has(oldObject.metadata.labels)`,
  `&& ${cel(REBALANCE_STATUS_LABEL)} in oldObject.metadata.labels && ${STATUS} in ${FENCED_VALUES}`,
  `&& has(oldObject.metadata.annotations) && ${MARKED}`,
].join(' ');

/**
 * Allowed: the controller itself; an old copy being deleted (its finalizers must be removable); and
 * anything in a namespace being deleted (the namespace controller empties it). The probe never is.
 */
const allowed = (componentUsers: readonly string[]) =>
  [
    `request.operation != 'CREATE' && (`,
    celUserIsOneOf(componentUsers),
    `|| has(oldObject.metadata.deletionTimestamp)`,
    `|| (namespaceObject != null && has(namespaceObject.metadata.deletionTimestamp)))`,
  ].join(' ');

const MESSAGE = [
  `request.operation == 'CREATE' ? 'the cellfed write fence is in force (probe)'`,
  `: request.resource.resource + ' "' + oldObject.metadata.name + '" is ' + ${STATUS}`,
  `+ ' to another cell: this copy takes no writes; retry through the cellfed router'`,
].join(' ');

/**
 * The policy and its binding for one cell, exempting `componentUsers`, the user names cellfed's controllers
 * call the cell as (the rebalance controller moves, the backup controller promotes and purges). It matches
 * updates and deletes of every resource, whatever the CellSets' cellular resources are (several CellSets may
 * share cells): only cellfed labels an object `migrating` or `migrated`.
 */
export function fencePolicyObjects(componentUsers: readonly string[]): [KubeObject, KubeObject] {
  return cellPolicyObjects(FENCE_POLICY_NAME, {
    matchConstraints: {
      resourceRules: [
        everyResource(['UPDATE', 'DELETE']),
        { apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['CREATE'] },
      ],
    },
    matchConditions: [{ name: 'fenced-copy-or-probe', expression: MATCH }],
    validations: [{ expression: allowed(componentUsers), messageExpression: MESSAGE, reason: 'Forbidden' }],
  });
}

/** What the controller creates with `dryRun=All`: refused when, and only when, the cell enforces the fence. */
export function fenceProbe(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: FENCE_PROBE_NAME, labels: { [FENCE_PROBE_LABEL]: 'true' } },
  };
}

/** Whether an apiserver's refusal (its Status, JSON or protobuf, as text) comes from the fence policy. */
export function isFenceRefusal(text: string): boolean {
  return text.includes(`ValidatingAdmissionPolicy '${FENCE_POLICY_NAME}'`);
}
