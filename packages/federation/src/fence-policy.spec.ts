import { FENCE_POLICY_NAME, fencePolicyObjects, fenceProbe, isFenceRefusal } from './fence-policy.ts';

type Policy = {
  spec: {
    matchConstraints: { resourceRules: { apiGroups: string[]; resources: string[]; operations: string[] }[] };
    matchConditions: { expression: string }[];
    validations: { expression: string }[];
  };
};

describe('fencePolicyObjects', () => {
  it('fences updates and deletes of every resource and subresource, and matches the probe', () => {
    const [policy] = fencePolicyObjects(['cellfed']);
    expect((policy as unknown as Policy).spec.matchConstraints.resourceRules).toEqual([
      expect.objectContaining({
        apiGroups: ['*'],
        resources: ['*/*'],
        operations: ['UPDATE', 'DELETE'],
      }),
      // The probe: a Namespace create, so the controller can learn whether the cell enforces the policy.
      expect.objectContaining({ apiGroups: [''], resources: ['namespaces'], operations: ['CREATE'] }),
    ]);
  });

  it('exempts exactly the components’ user names, each written as a CEL string whatever it holds', () => {
    const [policy] = fencePolicyObjects([
      'system:serviceaccount:x:"odd\\name"',
      'cellfed-backup',
      'cellfed-backup',
    ]);
    const [validation] = (policy as unknown as Policy).spec.validations;
    expect(validation!.expression).toContain(
      'request.userInfo.username in ["cellfed-backup", "system:serviceaccount:x:\\"odd\\\\name\\""]',
    );
    // None given exempts no one (never everyone).
    const [none] = fencePolicyObjects([]);
    expect((none as unknown as Policy).spec.validations[0]!.expression).toContain(
      "request.operation != 'CREATE' && ( false ||",
    );
  });

  it('binds the policy to deny, cluster-wide', () => {
    const [, binding] = fencePolicyObjects(['cellfed']);
    expect(binding).toMatchObject({
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: FENCE_POLICY_NAME },
      spec: { policyName: FENCE_POLICY_NAME, validationActions: ['Deny'] },
    });
    expect((binding as unknown as { spec: object }).spec).not.toHaveProperty('matchResources');
  });

  it('matches only fenced copies and the probe, by the label values of the protocol', () => {
    const [policy] = fencePolicyObjects(['cellfed']);
    const [condition] = (policy as unknown as Policy).spec.matchConditions;
    expect(condition!.expression).toContain('"cellfed.io/rebalance-status" in oldObject.metadata.labels');
    expect(condition!.expression).toContain('["migrating", "migrated"]');
    expect(condition!.expression).toContain(`"${fenceProbe().metadata.name}"`);
    // The controller's own mark with it: what a cell's controllers copy (labels alone) is not fenced.
    expect(condition!.expression).toContain(
      '("cellfed.io/fenced-at" in oldObject.metadata.annotations || "cellfed.io/migrated-at" in oldObject.metadata.annotations)',
    );
  });
});

describe('isFenceRefusal', () => {
  it('tells the fence policy’s refusal from any other 403', () => {
    expect(
      isFenceRefusal(
        `ValidatingAdmissionPolicy '${FENCE_POLICY_NAME}' with binding '${FENCE_POLICY_NAME}' denied request: x`,
      ),
    ).toBe(true);
    expect(isFenceRefusal('configmaps "a" is forbidden: User "bob" cannot update resource')).toBe(false);
    expect(isFenceRefusal("ValidatingAdmissionPolicy 'someone-else' with binding 'b' denied request")).toBe(
      false,
    );
  });
});
