import { MARKS_POLICY_NAME, marksPolicyObjects } from './marks-policy.ts';

type Policy = {
  spec: {
    matchConstraints: { resourceRules: { apiGroups: string[]; resources: string[]; operations: string[] }[] };
    matchConditions: { name: string; expression: string }[];
    variables: { name: string; expression: string }[];
    validations: { expression: string; messageExpression: string; reason: string }[];
  };
};

const policyOf = (users = ['cellfed-components']) => marksPolicyObjects(users)[0] as unknown as Policy;

describe('marksPolicyObjects', () => {
  it('judges creates and updates of every resource and subresource (a /status write changes metadata too)', () => {
    expect(policyOf().spec.matchConstraints.resourceRules).toEqual([
      expect.objectContaining({ apiGroups: ['*'], resources: ['*/*'], operations: ['CREATE', 'UPDATE'] }),
    ]);
  });

  it('leaves cellfed’s components and the cell’s own controllers alone, the user written as a CEL string', () => {
    const [who] = policyOf(['system:serviceaccount:x:"odd\\name"', 'cellfed-router']).spec.matchConditions;
    expect(who!.expression).toContain(
      '!(request.userInfo.username in ["cellfed-router", "system:serviceaccount:x:\\"odd\\\\name\\""])',
    );
    expect(who!.expression).toContain('request.userInfo.username != "system:kube-controller-manager"');
    expect(who!.expression).toContain('!("system:serviceaccounts:kube-system" in request.userInfo.groups)');
    expect(who!.expression).toContain('!("system:masters" in request.userInfo.groups)');
  });

  it('looks further only at writes whose object carries a cellfed.io/ key', () => {
    const [, marked] = policyOf().spec.matchConditions;
    expect(marked!.expression).toContain('object.metadata.labels.exists(k, k.startsWith("cellfed.io/"))');
    expect(marked!.expression).toContain(
      'object.metadata.annotations.exists(k, k.startsWith("cellfed.io/"))',
    );
  });

  it('refuses a mark set or changed, but not a client’s own, the held owners, or one kept as stored', () => {
    const { variables, validations } = policyOf().spec;
    for (const [map, name] of [
      ['labels', 'setOwnLabels'],
      ['annotations', 'setOwnAnnotations'],
    ] as const) {
      const variable = variables.find((each) => each.name === name)!;
      expect(variable.expression).toContain(`object.metadata.${map}.filter(k, k.startsWith("cellfed.io/")`);
      expect(variable.expression).toContain('!(k in ["cellfed.io/shard-by", "cellfed.io/owner-references"])');
      expect(variable.expression).toContain(`oldObject.metadata.${map}[k] == object.metadata.${map}[k]`);
      expect(validations).toContainEqual({
        expression: `size(variables.${name}) == 0`,
        messageExpression: `'metadata.${map}[' + variables.${name}[0] + ']: Forbidden: the cellfed.io/ prefix is reserved for cellfed'`,
        reason: 'Invalid',
      });
    }
  });

  it('judges a workload’s pod template too, whose marks the cell’s controllers copy onto what they make', () => {
    const { variables, validations, matchConditions } = policyOf().spec;
    const template = variables.find((each) => each.name === 'setTemplateLabels')!;
    expect(template.expression).toContain("request.resource.group == 'apps'");
    expect(template.expression).toContain(
      'has(object.spec) && has(object.spec.template) && has(object.spec.template.metadata) && has(object.spec.template.metadata.labels)',
    );
    expect(variables.find((each) => each.name === 'setJobTemplateAnnotations')!.expression).toContain(
      'object.spec.jobTemplate.spec.template.metadata.annotations.filter(',
    );
    expect(validations.map((validation) => validation.messageExpression)).toContainEqual(
      "'spec.template.metadata.labels[' + variables.setTemplateLabels[0] + ']: Forbidden: the cellfed.io/ prefix is reserved for cellfed'",
    );
    expect(matchConditions[1]!.expression).toContain('object.spec.template.metadata.annotations.exists(');
  });

  it('binds the policy to deny, cluster-wide', () => {
    const [, binding] = marksPolicyObjects(['cellfed']);
    expect(binding).toMatchObject({
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: MARKS_POLICY_NAME },
      spec: { policyName: MARKS_POLICY_NAME, validationActions: ['Deny'] },
    });
  });
});
