/**
 * Which objects hold owner references to which owners, so that an owner's change (its deletion above all)
 * queues its dependents at once. Owners are named by group, namespace and name: a reference names a kind,
 * a cache event a resource, and the group is what both know; two kinds of one group with one name only
 * cost a needless look.
 */
export class DependentsIndex {
  private readonly ownersOf = new Map<string, ReadonlySet<string>>();
  private readonly dependentsOf = new Map<string, Set<string>>();

  /** Records the owners `dependent` holds now (none: it is forgotten). */
  set(dependent: string, owners: ReadonlySet<string>): void {
    for (const owner of this.ownersOf.get(dependent) ?? []) {
      if (owners.has(owner)) continue;
      const dependents = this.dependentsOf.get(owner);
      dependents?.delete(dependent);
      if (dependents?.size === 0) this.dependentsOf.delete(owner);
    }
    if (owners.size === 0) {
      this.ownersOf.delete(dependent);
      return;
    }
    this.ownersOf.set(dependent, owners);
    for (const owner of owners) {
      let dependents = this.dependentsOf.get(owner);
      if (!dependents) this.dependentsOf.set(owner, (dependents = new Set()));
      dependents.add(dependent);
    }
  }

  dependents(owner: string): readonly string[] {
    return [...(this.dependentsOf.get(owner) ?? [])];
  }

  /** Every object that holds owner references. */
  all(): readonly string[] {
    return [...this.ownersOf.keys()];
  }
}

/** How the index names an owner. */
export function ownerName(group: string, namespace: string, name: string): string {
  return `${group}/${namespace}/${name}`;
}

/** The group of an owner reference's `apiVersion` (`apps/v1` → `apps`, `v1` → ``). */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
}
