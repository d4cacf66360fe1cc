import { z } from 'zod';

import { CELL_STATES, MAX_WEIGHT } from '@cellfed/hashing';

import { CellSetError, type ValidationIssue } from './errors.ts';
import { versionSlot } from './object-versions.ts';

/** API group and version of the CellSet kind. */
export const CELLSET_API_VERSION = 'cells.cellfed.io/v1alpha1';
/** Kind name. */
export const CELLSET_KIND = 'CellSet';
/** Name of the CellSet the federation uses unless configured otherwise. */
export const DEFAULT_CELLSET_NAME = 'default';
/**
 * The namespace cellfed runs in, in the router control plane: the routers' Leases, and the cells' kubeconfig
 * Secrets of every component not given a credentials namespace of its own.
 */
export const DEFAULT_SECRET_NAMESPACE = 'cellfed-system';
/** Key in a cell's Secret that holds its kubeconfig unless a cell says otherwise. */
export const DEFAULT_SECRET_KEY = 'kubeconfig';

/** The resources that live in cells unless the CellSet lists others. */
export const DEFAULT_CELLULAR_RESOURCES = [
  { group: 'apps', version: 'v1', resource: 'deployments' },
  { group: 'apps', version: 'v1', resource: 'statefulsets' },
  { group: 'apps', version: 'v1', resource: 'daemonsets' },
  { group: 'batch', version: 'v1', resource: 'jobs' },
  { group: 'batch', version: 'v1', resource: 'cronjobs' },
  { group: '', version: 'v1', resource: 'services' },
  { group: '', version: 'v1', resource: 'configmaps' },
] as const;

/**
 * The resources mirrored from the router control plane into every cell unless the CellSet lists others
 * (docs/governance.md has the rule for each kind). Each governs or serves the workloads of the cell it is
 * in, and a cell's apiserver and controllers read only their own store: RBAC for pods' ServiceAccounts and
 * for callers the router impersonates, the classes pods name, the limits and policies a cell's admission
 * and network plugin apply, and the budgets its eviction API checks. A resource the CellSet lists as
 * cellular is left out.
 */
export const DEFAULT_SHARED_RESOURCES = [
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings' },
  { group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses' },
  { group: 'node.k8s.io', version: 'v1', resource: 'runtimeclasses' },
  { group: '', version: 'v1', resource: 'limitranges' },
  { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies' },
  { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' },
  { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicies' },
  { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicybindings' },
  { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingadmissionpolicies' },
  { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingadmissionpolicybindings' },
  { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' },
  { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations' },
] as const;

/**
 * The rules the zod schemas below enforce, as data: the CellSet CRD's OpenAPI schema is generated from
 * these same values (crds/cellset-crd.ts), so the apiserver and the controllers agree.
 */
export const CELLSET_RULES = {
  dns1123Label: { pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 },
  dns1123Subdomain: {
    pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    maxLength: 253,
  },
  secretKey: { pattern: '^[-._a-zA-Z0-9]+$' },
  version: { pattern: '^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$' },
  weight: { minimum: 1, maximum: MAX_WEIGHT, default: 1 },
  /**
   * A weight changes as a rebalance does: the writer sets `previousWeight` to the weight routed by until
   * now, and the rebalance controller removes it once every object sits where the new weight puts it.
   */
  /** Each cell's slot in the resourceVersions clients see (object-versions.ts) is its own. */
  distinctVersionSlots: "no two cells' ids may give the same resourceVersion slot",
  weightChange:
    "a cell's weight changes only while it is Normal and no change of it is under way, with previousWeight set to the weight it had (kubectl cells weight does both)",
  atLeastOneNormal: 'at least one cell must be Normal (add a cell as Joining next to a Normal one)',
} as const;

const DNS1123_LABEL = new RegExp(CELLSET_RULES.dns1123Label.pattern);
const DNS1123_SUBDOMAIN = new RegExp(CELLSET_RULES.dns1123Subdomain.pattern);
const SECRET_KEY = new RegExp(CELLSET_RULES.secretKey.pattern);
const VERSION = new RegExp(CELLSET_RULES.version.pattern);

const show = (value: unknown): string =>
  typeof value === 'string'
    ? `"${value}"`
    : Array.isArray(value)
      ? 'a list'
      : value === null
        ? 'null'
        : typeof value === 'object'
          ? 'an object'
          : String(value);

/** Error text for a value of the wrong type: "is required" when absent, otherwise what was expected. */
const expected =
  (what: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? 'is required' : `must be ${what}; got ${show(issue.input)}`;

/** A string of at most `maxLength` characters matching `pattern`; `rule` says what that means. */
const nameString = (what: string, pattern: RegExp, maxLength: number, rule: string) =>
  z.string({ error: expected('a string') }).check((ctx) => {
    const value = ctx.value;
    if (value.length > maxLength || !pattern.test(value)) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: `${show(value)} is not a valid ${what}: it must be ${rule}`,
      });
    }
  });

const dnsLabel = (what: string) =>
  nameString(
    what,
    DNS1123_LABEL,
    CELLSET_RULES.dns1123Label.maxLength,
    "a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)",
  );

const dnsSubdomain = (what: string) =>
  nameString(what, DNS1123_SUBDOMAIN, CELLSET_RULES.dns1123Subdomain.maxLength, 'a DNS-1123 subdomain');

/** Zod schema of a cell state. */
export const CellStateSchema = z.enum(CELL_STATES, {
  error: expected(`one of ${CELL_STATES.join(', ')}`),
});

/**
 * Zod schema of the reference to a cell's kubeconfig Secret in the router control plane. Without a
 * namespace, each of cellfed's components reads the Secret of that name from its own credentials namespace,
 * so each can call the cell as an identity of its own, with only its rights there. With one, it is that
 * Secret for every component whose credentials namespace it is (one identity for all of them); a component
 * with a credentials namespace of its own refuses it.
 */
export const SecretRefSchema = z.object(
  {
    name: dnsSubdomain('secret name'),
    namespace: dnsLabel('secret namespace').optional(),
    key: z
      .string()
      .regex(SECRET_KEY, { error: (issue) => `${show(issue.input)} is not a valid Secret data key` })
      .default(DEFAULT_SECRET_KEY),
  },
  { error: expected("an object with the Secret's name") },
);

const weightNumber = () =>
  z.number({ error: expected('a number') }).check((ctx) => {
    const value = ctx.value;
    if (
      !Number.isInteger(value) ||
      value < CELLSET_RULES.weight.minimum ||
      value > CELLSET_RULES.weight.maximum
    ) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: `must be a positive integer (1 to ${MAX_WEIGHT}); got ${show(value)}`,
      });
    }
  });

/** Zod schema of one cell. */
export const CellSchema = z
  .object(
    {
      id: dnsLabel('cell id'),
      weight: weightNumber().default(CELLSET_RULES.weight.default),
      /**
       * Set while the cell's weight is changing: the weight objects are placed by until the rebalance to
       * `weight` has finished (the ring of CurrentCells uses it, the ring of DesiredCells uses `weight`).
       */
      previousWeight: weightNumber().optional(),
      state: CellStateSchema,
      kubeconfigSecretRef: SecretRefSchema,
    },
    { error: expected('an object') },
  )
  .check((ctx) => {
    const { previousWeight, weight, state } = ctx.value;
    if (previousWeight === undefined) return;
    if (state !== 'Normal')
      ctx.issues.push({
        code: 'custom',
        input: previousWeight,
        path: ['previousWeight'],
        message: `only a Normal cell changes weight; this one is ${state}`,
      });
    else if (previousWeight === weight)
      ctx.issues.push({
        code: 'custom',
        input: previousWeight,
        path: ['previousWeight'],
        message: `equals weight (${weight}): remove it, or set weight to the new value`,
      });
  });

/** Zod schema of a group/version/resource. `group` is empty for the core API. */
export const GroupVersionResourceSchema = z.object({
  group: z.union([z.literal(''), dnsSubdomain('group')]),
  version: z.string().regex(VERSION, {
    error: (issue) => `${show(issue.input)} is not a Kubernetes API version (v1, v2beta1, …)`,
  }),
  resource: dnsLabel('resource'),
});

/** Zod schema of `CellSet.spec`, with every cross-field rule. */
export const CellSetSpecSchema = z
  .object(
    {
      shardBy: z
        .enum(['name', 'namespace'], {
          error: (issue) => `must be "name" or "namespace"; got ${show(issue.input)}`,
        })
        .default('name'),
      cellularResources: z
        .array(GroupVersionResourceSchema, { error: expected('a list') })
        .default(() => DEFAULT_CELLULAR_RESOURCES.map((gvr) => ({ ...gvr }))),
      // Absent, not empty: the defaults, less what the CellSet makes cellular (see below).
      sharedResources: z.array(GroupVersionResourceSchema, { error: expected('a list') }).optional(),
      cells: z
        .array(CellSchema, { error: expected('a list') })
        .min(1, { error: 'must list at least one cell' }),
    },
    { error: expected('an object') },
  )
  .check((ctx) => {
    const { cells, cellularResources, sharedResources } = ctx.value;
    const firstIndex = new Map<string, number>();
    const slotIndex = new Map<number, number>();
    cells.forEach((cell, index) => {
      const first = firstIndex.get(cell.id);
      if (first === undefined) {
        firstIndex.set(cell.id, index);
      } else {
        ctx.issues.push({
          code: 'custom',
          input: cell.id,
          path: ['cells', index, 'id'],
          message: `duplicate cell id "${cell.id}" (already at spec.cells[${first}])`,
        });
        return;
      }
      const slot = versionSlot(cell.id);
      const sharing = slotIndex.get(slot);
      if (sharing === undefined) slotIndex.set(slot, index);
      else
        ctx.issues.push({
          code: 'custom',
          input: cell.id,
          path: ['cells', index, 'id'],
          message: `${CELLSET_RULES.distinctVersionSlots}: "${cell.id}" and "${cells[sharing]!.id}" (spec.cells[${sharing}]) share slot ${slot}; choose another id`,
        });
    });
    if (cells.length > 0 && !cells.some((cell) => cell.state === 'Normal')) {
      ctx.issues.push({
        code: 'custom',
        input: cells,
        path: ['cells'],
        message: CELLSET_RULES.atLeastOneNormal,
      });
    }
    const seen = new Map<string, string>();
    const listed = (field: 'cellularResources' | 'sharedResources', list: readonly GroupVersionResource[]) =>
      list.forEach((gvr, index) => {
        const id = `${gvr.group}/${gvr.resource}`;
        const first = seen.get(id);
        if (first === undefined) {
          seen.set(id, `spec.${field}[${index}]`);
        } else {
          ctx.issues.push({
            code: 'custom',
            input: gvr,
            path: [field, index],
            message: `resource "${gvr.resource}" of group "${gvr.group}" is listed twice (already at ${first}); a resource is either cellular or shared`,
          });
        }
      });
    listed('cellularResources', cellularResources);
    listed('sharedResources', sharedResources ?? []);
  })
  .transform(({ sharedResources, ...spec }) => ({
    ...spec,
    sharedResources:
      sharedResources ??
      DEFAULT_SHARED_RESOURCES.filter(
        (shared) =>
          !spec.cellularResources.some(
            (cellular) => cellular.group === shared.group && cellular.resource === shared.resource,
          ),
      ).map((gvr) => ({ ...gvr })),
  }));

/** Zod schema of a whole CellSet object as stored in the router control plane. */
export const CellSetSchema = z.object(
  {
    apiVersion: z.literal(CELLSET_API_VERSION, {
      error: (issue) => `must be "${CELLSET_API_VERSION}"; got ${show(issue.input)}`,
    }),
    kind: z.literal(CELLSET_KIND, {
      error: (issue) => `must be "${CELLSET_KIND}"; got ${show(issue.input)}`,
    }),
    metadata: z.looseObject(
      {
        name: dnsSubdomain('metadata.name'),
        generation: z.number().int().optional(),
        resourceVersion: z.string().optional(),
      },
      { error: expected('an object') },
    ),
    spec: CellSetSpecSchema,
    status: z.unknown().optional(),
  },
  { error: expected('a CellSet object') },
);

/** A cell, defaults applied. */
export type Cell = z.output<typeof CellSchema>;
/** A group/version/resource. */
export type GroupVersionResource = z.output<typeof GroupVersionResourceSchema>;
/** `CellSet.spec`, defaults applied. */
export type CellSetSpec = z.output<typeof CellSetSpecSchema>;
/** `CellSet.spec` as written by a person (optional fields may be absent). */
export type CellSetSpecInput = z.input<typeof CellSetSpecSchema>;
/** A CellSet object, defaults applied. */
export type CellSet = z.output<typeof CellSetSchema>;
/** A CellSet object as written by a person. */
export type CellSetInput = z.input<typeof CellSetSchema>;

/**
 * Validates a CellSet object and applies defaults.
 *
 * @throws {@link CellSetError} `CELLFED_INVALID_CELLSET`; its message lists every problem as `path: problem`
 *   (e.g. `spec.cells[1].weight: weight must be a positive integer) and `issues` holds them.
 */
export function parseCellSet(input: unknown): CellSet {
  return parseWith(CellSetSchema, input, '', 'CellSet');
}

/**
 * Validates `CellSet.spec` alone and applies defaults. Issue paths start with `spec.`.
 * @throws {@link CellSetError} `CELLFED_INVALID_CELLSET`
 */
export function parseCellSetSpec(input: unknown): CellSetSpec {
  return parseWith(CellSetSpecSchema, input, 'spec', 'CellSet spec');
}

/** Like {@link parseCellSet}, but returns the issues instead of throwing. */
export function safeParseCellSet(
  input: unknown,
): { success: true; data: CellSet } | { success: false; issues: ValidationIssue[] } {
  const result = CellSetSchema.safeParse(input);
  return result.success
    ? { success: true, data: result.data }
    : { success: false, issues: toIssues(result.error, '') };
}

function parseWith<T extends z.ZodType>(
  schema: T,
  input: unknown,
  prefix: string,
  what: string,
): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = toIssues(result.error, prefix);
  const lines = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
  throw new CellSetError(`invalid ${what}: ${lines.join('; ')}`, issues);
}

function toIssues(error: z.ZodError, prefix: string): ValidationIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(prefix, issue.path), message: issue.message }));
}

/** ['spec', 'cells', 1, 'id'] → 'spec.cells[1].id' */
function formatPath(prefix: string, path: readonly PropertyKey[]): string {
  let result = prefix;
  for (const part of path) {
    if (typeof part === 'number') result += `[${part}]`;
    else result += result === '' ? String(part) : `.${String(part)}`;
  }
  return result;
}
