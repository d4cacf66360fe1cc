import type { CellState } from '@cellfed/hashing';

import {
  CELLSET_API_VERSION,
  DEFAULT_CELLULAR_RESOURCES,
  DEFAULT_SHARED_RESOURCES,
  parseCellSet,
  parseCellSetSpec,
  safeParseCellSet,
  type CellSetSpecInput,
} from './cell-set.ts';
import { ApiErrorCode, CellSetError } from './errors.ts';

/** A CellSet spec with the given cells (weight 1 unless given) and a Secret per cell. */
function specOf(
  cells: ReadonlyArray<readonly [id: string, state: CellState, weight?: number]>,
): CellSetSpecInput {
  return {
    cells: cells.map(([id, state, weight]) => ({
      id,
      state,
      weight: weight ?? 1,
      kubeconfigSecretRef: { name: `${id}-kubeconfig` },
    })),
  };
}

const object = (spec: unknown) => ({
  apiVersion: CELLSET_API_VERSION,
  kind: 'CellSet',
  metadata: { name: 'default' },
  spec,
});
const valid = specOf([
  ['cell-a', 'Normal'],
  ['cell-b', 'Joining', 2],
]);

/** The issues parseCellSet reports for `input`, as "path: message". */
function problems(input: unknown): string[] {
  try {
    parseCellSet(input);
  } catch (error) {
    expect(error).toBeInstanceOf(CellSetError);
    expect((error as CellSetError).code).toBe(ApiErrorCode.InvalidCellSet);
    return (error as CellSetError).issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error('expected the CellSet to be rejected');
}

const withCell = (patch: Record<string, unknown>, index = 0): CellSetSpecInput => ({
  ...valid,
  cells: valid.cells.map((cell, i) => (i === index ? { ...cell, ...patch } : cell)),
});

describe('CellSet schema', () => {
  it('accepts a valid CellSet and applies the defaults', () => {
    const cellSet = parseCellSet(
      object({ cells: [{ id: 'a', state: 'Normal', kubeconfigSecretRef: { name: 'a-kubeconfig' } }] }),
    );
    expect(cellSet.spec).toEqual({
      shardBy: 'name',
      cellularResources: DEFAULT_CELLULAR_RESOURCES,
      sharedResources: DEFAULT_SHARED_RESOURCES,
      cells: [
        {
          id: 'a',
          weight: 1,
          state: 'Normal',
          // No namespace: each component reads the Secret from its own credentials namespace.
          kubeconfigSecretRef: { name: 'a-kubeconfig', key: 'kubeconfig' },
        },
      ],
    });
    expect(parseCellSetSpec(valid).cells.map((c) => [c.id, c.state, c.weight])).toEqual([
      ['cell-a', 'Normal', 1],
      ['cell-b', 'Joining', 2],
    ]);
  });

  it('shares the default resources less those made cellular, and keeps a list given, even an empty one', () => {
    const networkPolicies = { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies' };
    const shared = parseCellSetSpec({ ...valid, cellularResources: [networkPolicies] }).sharedResources;
    expect(shared).toHaveLength(DEFAULT_SHARED_RESOURCES.length - 1);
    expect(shared).not.toContainEqual(networkPolicies);
    expect(shared).toContainEqual({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' });
    expect(parseCellSetSpec({ ...valid, sharedResources: [] }).sharedResources).toEqual([]);
  });

  it('keeps unknown metadata and the status as they are', () => {
    const input = {
      ...object(valid),
      metadata: { name: 'default', uid: 'u-1', labels: { x: 'y' } },
      status: { phase: 'Stable' },
    };
    const cellSet = parseCellSet(input);
    expect(cellSet.metadata).toMatchObject({ uid: 'u-1', labels: { x: 'y' } });
    expect(cellSet.status).toEqual({ phase: 'Stable' });
  });

  it.each<[string, unknown, string[]]>([
    [
      'duplicate ids',
      { ...valid, cells: [...valid.cells, { ...valid.cells[0]!, state: 'Draining' }] },
      ['spec.cells[2].id: duplicate cell id "cell-a" (already at spec.cells[0])'],
    ],
    [
      'weight 0',
      withCell({ weight: 0 }),
      ['spec.cells[0].weight: must be a positive integer (1 to 1000); got 0'],
    ],
    [
      'a negative weight',
      withCell({ weight: -2 }),
      ['spec.cells[0].weight: must be a positive integer (1 to 1000); got -2'],
    ],
    [
      'a fractional weight',
      withCell({ weight: 0.5 }),
      ['spec.cells[0].weight: must be a positive integer (1 to 1000); got 0.5'],
    ],
    ['a weight as a string', withCell({ weight: '2' }), ['spec.cells[0].weight: must be a number; got "2"']],
    [
      'a previousWeight on a cell that is not Normal',
      withCell({ weight: 2, previousWeight: 1, state: 'Joining' }, 1),
      ['spec.cells[1].previousWeight: only a Normal cell changes weight; this one is Joining'],
    ],
    [
      'a previousWeight equal to the weight',
      withCell({ weight: 2, previousWeight: 2 }),
      ['spec.cells[0].previousWeight: equals weight (2): remove it, or set weight to the new value'],
    ],
    [
      'a previousWeight out of range',
      withCell({ previousWeight: 1001 }),
      ['spec.cells[0].previousWeight: must be a positive integer (1 to 1000); got 1001'],
    ],
    [
      'no Normal cell',
      specOf([
        ['cell-a', 'Joining'],
        ['cell-b', 'Draining'],
        ['cell-c', 'Down'],
      ]),
      ['spec.cells: at least one cell must be Normal (add a cell as Joining next to a Normal one)'],
    ],
    [
      'an unknown state',
      withCell({ state: 'Active' }, 1),
      ['spec.cells[1].state: must be one of Normal, Joining, Draining, Down; got "Active"'],
    ],
    ['a missing state', withCell({ state: undefined }, 1), ['spec.cells[1].state: is required']],
    [
      'an id with upper case',
      withCell({ id: 'Cell-A' }),
      [
        `spec.cells[0].id: "Cell-A" is not a valid cell id: it must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)`,
      ],
    ],
    [
      'an id too long',
      withCell({ id: 'a'.repeat(64) }),
      [expect.stringMatching(/^spec\.cells\[0\]\.id: "a{64}" is not a valid cell id/)],
    ],
    [
      'an id ending in a dash',
      withCell({ id: 'cell-' }),
      [expect.stringMatching(/^spec\.cells\[0\]\.id: "cell-" is not a valid cell id/)],
    ],
    [
      'no Secret reference',
      withCell({ kubeconfigSecretRef: undefined }),
      ['spec.cells[0].kubeconfigSecretRef: is required'],
    ],
    [
      'a bad Secret name',
      withCell({ kubeconfigSecretRef: { name: 'Bad_Name' } }),
      [
        'spec.cells[0].kubeconfigSecretRef.name: "Bad_Name" is not a valid secret name: it must be a DNS-1123 subdomain',
      ],
    ],
    ['no cells', { cells: [] }, ['spec.cells: must list at least one cell']],
    ['cells not a list', { cells: { a: 1 } }, ['spec.cells: must be a list; got an object']],
    [
      'a bad shardBy',
      { ...valid, shardBy: 'label' },
      ['spec.shardBy: must be "name" or "namespace"; got "label"'],
    ],
    [
      'a resource listed twice',
      {
        ...valid,
        cellularResources: [
          { group: 'apps', version: 'v1', resource: 'deployments' },
          { group: 'apps', version: 'v1beta2', resource: 'deployments' },
        ],
      },
      [
        'spec.cellularResources[1]: resource "deployments" of group "apps" is listed twice (already at spec.cellularResources[0]); a resource is either cellular or shared',
      ],
    ],
    [
      'a resource both cellular and shared',
      {
        ...valid,
        cellularResources: [{ group: '', version: 'v1', resource: 'configmaps' }],
        sharedResources: [
          { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' },
          { group: '', version: 'v1', resource: 'configmaps' },
        ],
      },
      [
        'spec.sharedResources[1]: resource "configmaps" of group "" is listed twice (already at spec.cellularResources[0]); a resource is either cellular or shared',
      ],
    ],
    [
      'a bad resource version',
      { ...valid, cellularResources: [{ group: 'apps', version: '1', resource: 'deployments' }] },
      ['spec.cellularResources[0].version: "1" is not a Kubernetes API version (v1, v2beta1, …)'],
    ],
  ])('rejects %s, naming the path and the problem', (_what, spec, expected) => {
    expect(problems(object(spec))).toEqual(expected);
  });

  it('refuses cells whose ids give the same resourceVersion slot', () => {
    // Found by search: the first clash among cell-0, cell-1, ... (object-versions.ts).
    expect(
      problems(
        object(
          specOf([
            ['cell-589', 'Normal'],
            ['cell-924', 'Joining'],
          ]),
        ),
      ),
    ).toEqual([
      'spec.cells[1].id: no two cells\' ids may give the same resourceVersion slot: "cell-924" and "cell-589" (spec.cells[0]) share slot 895603; choose another id',
    ]);
  });

  it('reports every field problem at once', () => {
    expect(problems(object(withCell({ id: 'A', weight: 0, state: 'x' })))).toHaveLength(3);
  });

  it('rejects the wrong kind, apiVersion and missing parts', () => {
    expect(problems({ ...object(valid), apiVersion: 'v1', kind: 'Cells' })).toEqual([
      'apiVersion: must be "cells.cellfed.io/v1alpha1"; got "v1"',
      'kind: must be "CellSet"; got "Cells"',
    ]);
    expect(
      problems({ apiVersion: CELLSET_API_VERSION, kind: 'CellSet', metadata: { name: 'default' } }),
    ).toEqual(['spec: is required']);
    expect(problems(null)).toEqual([': must be a CellSet object; got null']);
  });

  it('puts every problem in one readable message', () => {
    expect(() => parseCellSet(object(withCell({ weight: 0 })))).toThrow(
      'invalid CellSet: spec.cells[0].weight: must be a positive integer (1 to 1000); got 0',
    );
    expect(() => parseCellSetSpec({ cells: [] })).toThrow(
      'invalid CellSet spec: spec.cells: must list at least one cell',
    );
  });

  it('has a non-throwing form', () => {
    expect(safeParseCellSet(object(valid))).toMatchObject({ success: true });
    expect(safeParseCellSet(object({ cells: [] }))).toEqual({
      success: false,
      issues: [{ path: 'spec.cells', message: 'must list at least one cell' }],
    });
  });
});
