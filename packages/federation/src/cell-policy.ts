import type { KubeObject } from './kube-object.ts';

/*
 * The shape cellfed's ValidatingAdmissionPolicies in the cells share (the write fence, the marks policy):
 * managed by the rebalance controller, failing closed, bound cluster-wide to deny.
 */

const POLICIES = 'admissionregistration.k8s.io/v1';
const MANAGED = { 'app.kubernetes.io/managed-by': 'cellfed-rebalance-controller' };

/** A Go-style quoted string is also a CEL string literal. */
export const cel = (text: string) => JSON.stringify(text);

/**
 * A CEL condition that the request's user is one of `users` (cellfed's components in the cell: each calls
 * it as an identity of its own). None given matches no one.
 */
export const celUserIsOneOf = (users: readonly string[]) =>
  users.length === 0
    ? 'false'
    : `request.userInfo.username in [${[...new Set(users)].sort().map(cel).join(', ')}]`;

/** A rule matching `operations` on every resource and subresource of every group. */
export function everyResource(operations: readonly string[]): Record<string, unknown> {
  return { apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], operations, scope: '*' };
}

/** The policy `name` with `spec` (failing closed), and its binding that denies what it refuses, everywhere. */
export function cellPolicyObjects(name: string, spec: Record<string, unknown>): [KubeObject, KubeObject] {
  const policy = {
    apiVersion: POLICIES,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels: MANAGED },
    spec: { failurePolicy: 'Fail', ...spec },
  };
  const binding = {
    apiVersion: POLICIES,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels: MANAGED },
    spec: { policyName: name, validationActions: ['Deny'] },
  };
  return [policy, binding];
}
