/**
 * `selector` (a label or field selector) with `requirement` added, both to hold. A selector that ends in an
 * unpaired escape (`\`) is left as it is: kube-apiserver refuses it, and an added term would be escaped into
 * its last value instead of holding.
 */
export function withRequirement(selector: string | null, requirement: string): string {
  if (!selector) return requirement;
  const trailing = selector.length - selector.replace(/\\+$/, '').length;
  return trailing % 2 === 1 ? selector : `${selector},${requirement}`;
}
