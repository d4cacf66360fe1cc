/** A Kubernetes LabelSelector (metav1.LabelSelector), as an admission binding's paramRef carries it. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }[];
}

/**
 * Whether `labels` satisfy `selector`, as apimachinery's LabelSelectorAsSelector reads it: every matchLabels
 * pair and every expression must hold; an empty selector matches everything. An operator apimachinery does
 * not know matches nothing (the apiserver refuses such a selector, so it never selects anything there).
 */
export function matchesSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const has = (key: string) => labels !== undefined && Object.hasOwn(labels, key);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (!has(key) || labels![key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const holds =
      operator === 'In'
        ? has(key) && values.includes(labels![key]!)
        : operator === 'NotIn'
          ? !has(key) || !values.includes(labels![key]!)
          : operator === 'Exists'
            ? has(key)
            : operator === 'DoesNotExist'
              ? !has(key)
              : false;
    if (!holds) return false;
  }
  return true;
}
