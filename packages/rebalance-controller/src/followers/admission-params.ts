import type { GroupVersionResource } from '@cellfed/api';
import { type CopiesView } from '@cellfed/controller-kit';
import { CONFIG_MAPS, SECRETS, type KubeObject } from '@cellfed/federation';

import { sameResource } from '../mirror/shared-objects.ts';
import { matchesSelector, type LabelSelector } from './label-selector.ts';

const ADMISSION = 'admissionregistration.k8s.io';
const admission = (resource: string): GroupVersionResource => ({ group: ADMISSION, version: 'v1', resource });

/** Each kind of admission policy with the kind of its bindings, whose paramRefs name the params. */
export const POLICY_KINDS = [
  {
    policies: admission('validatingadmissionpolicies'),
    bindings: admission('validatingadmissionpolicybindings'),
  },
  {
    policies: admission('mutatingadmissionpolicies'),
    bindings: admission('mutatingadmissionpolicybindings'),
  },
] as const;

/** Whether a resource is one of the admission policy kinds' policies or bindings. */
export function isPolicyKind(resource: GroupVersionResource): boolean {
  return POLICY_KINDS.some(
    ({ policies, bindings }) => sameResource(policies, resource) || sameResource(bindings, resource),
  );
}

/** The param kinds followed into cells (as ConfigMaps and Secrets pod templates name are), by paramKind. */
const FOLLOWED_PARAM_KINDS = new Map([
  ['v1/ConfigMap', CONFIG_MAPS.resource],
  ['v1/Secret', SECRETS.resource],
]);

/** One binding's paramRef, for a param kind that is followed. */
export interface ParamWant {
  /** `configmaps` or `secrets`. */
  readonly resource: string;
  /** Unset: the namespace of the object each request admits, so every namespace. */
  readonly namespace?: string;
  readonly name?: string;
  readonly selector?: LabelSelector;
}

/** An object of a param kind, as the cells' caches know it. */
export interface ParamCandidate {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>> | undefined;
}

interface Binding extends KubeObject {
  spec?: { policyName?: string; paramRef?: { name?: string; namespace?: string; selector?: LabelSelector } };
}
interface Policy extends KubeObject {
  spec?: { paramKind?: { apiVersion?: string; kind?: string } };
}

/**
 * The params the control plane's admission policy bindings name. Each cell's apiserver resolves a binding's
 * `paramRef` in its own store; a ConfigMap (cellular) lives in one cell and a Secret in the control plane,
 * so the other cells would find no param and refuse by the binding's `parameterNotFoundAction`. The follower
 * reconciler keeps a follower copy of each named param in every cell, as it does for what pod templates
 * name. Params of other kinds are the CellSet's to share (a custom kind in `sharedResources`).
 */
export class AdmissionParams {
  static readonly NONE = new AdmissionParams([]);

  readonly wants: readonly ParamWant[];
  private readonly identity: string;

  constructor(wants: readonly ParamWant[]) {
    this.wants = wants;
    this.identity = JSON.stringify(wants);
  }

  /** The wants of every binding whose policy takes a followed param kind. */
  static of(kinds: readonly { policies: readonly KubeObject[]; bindings: readonly KubeObject[] }[]) {
    const wants: ParamWant[] = [];
    for (const { policies, bindings } of kinds) {
      const paramKinds = new Map(
        (policies as Policy[]).map((policy) => {
          const kind = policy.spec?.paramKind;
          return [policy.metadata.name, FOLLOWED_PARAM_KINDS.get(`${kind?.apiVersion}/${kind?.kind}`)];
        }),
      );
      for (const binding of bindings as Binding[]) {
        const resource = paramKinds.get(binding.spec?.policyName);
        const ref = binding.spec?.paramRef;
        if (!resource || !ref) continue;
        wants.push({
          resource,
          ...(ref.namespace ? { namespace: ref.namespace } : {}),
          ...(ref.name ? { name: ref.name } : {}),
          ...(ref.selector && !ref.name ? { selector: ref.selector } : {}),
        });
      }
    }
    wants.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    return new AdmissionParams(wants);
  }

  equals(other: AdmissionParams): boolean {
    return this.identity === other.identity;
  }

  /** Whether some binding names this object of `resource` as a param. */
  names(resource: string, namespace: string, object: ParamCandidate): boolean {
    return this.wants.some((want) => want.resource === resource && selects(want, namespace, object));
  }

  /**
   * The names of `resource` in `namespace` that bindings name. A cellular kind's params are taken from
   * `present` (the objects the cells hold there), so a name or selector that matches nothing asks for no
   * read; a kind stored in the control plane is read by name, so only a binding that names both the
   * namespace and the name is followed (a name in every namespace, or a selector, would mean a read of
   * the control plane per namespace and pass).
   */
  namesIn(
    resource: string,
    namespace: string,
    present: readonly ParamCandidate[],
    cellular: boolean,
  ): Set<string> {
    const names = new Set<string>();
    for (const want of this.wants) {
      if (want.resource !== resource) continue;
      if (cellular) {
        for (const object of present) if (selects(want, namespace, object)) names.add(object.name);
      } else if (want.namespace === namespace && want.name) names.add(want.name);
    }
    return names;
  }

  /** The namespaces that hold params of these wants, or may: a want's own namespace and the cells' objects. */
  namespaces(copies: Pick<CopiesView, 'eachCopy'>): Set<string> {
    const namespaces = new Set<string>();
    for (const want of this.wants) if (want.namespace) namespaces.add(want.namespace);
    if (this.wants.length === 0) return namespaces;
    copies.eachCopy((_cell, ref, metadata) => {
      if (ref.resource.group !== '' || namespaces.has(ref.namespace)) return;
      if (this.names(ref.resource.resource, ref.namespace, { name: ref.name, labels: metadata.labels }))
        namespaces.add(ref.namespace);
    });
    return namespaces;
  }
}

function selects(want: ParamWant, namespace: string, object: ParamCandidate): boolean {
  if (want.namespace !== undefined && want.namespace !== namespace) return false;
  if (want.name !== undefined) return want.name === object.name;
  return want.selector !== undefined && matchesSelector(want.selector, object.labels);
}
