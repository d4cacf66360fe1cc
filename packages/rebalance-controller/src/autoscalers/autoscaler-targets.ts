import type { HorizontalPodAutoscaler } from './autoscaler-copy.ts';

/**
 * Which control-plane autoscalers name which target, by namespace and target name (the kind aside: a
 * change to any object of that name queues them, and their reconciler resolves the kind): a target that
 * moves, appears or goes queues only its autoscalers, never all.
 */
export class AutoscalerTargets {
  private readonly targetOf = new Map<string, string>();
  private readonly autoscalersOf = new Map<string, Set<string>>();

  /** Records what `name` targets now; an autoscaler gone is `undefined`. */
  set(namespace: string, name: string, autoscaler: HorizontalPodAutoscaler | undefined): void {
    const self = `${namespace}/${name}`;
    const before = this.targetOf.get(self);
    if (before !== undefined) {
      const names = this.autoscalersOf.get(before);
      names?.delete(name);
      if (names?.size === 0) this.autoscalersOf.delete(before);
      this.targetOf.delete(self);
    }
    const target = autoscaler?.spec?.scaleTargetRef?.name;
    if (!target) return;
    const key = `${namespace}/${target}`;
    this.targetOf.set(self, key);
    const names = this.autoscalersOf.get(key) ?? new Set<string>();
    names.add(name);
    this.autoscalersOf.set(key, names);
  }

  /** The autoscalers in `namespace` whose target is named `target`. */
  of(namespace: string, target: string): string[] {
    return [...(this.autoscalersOf.get(`${namespace}/${target}`) ?? [])];
  }
}
