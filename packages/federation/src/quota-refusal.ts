/** What kube-apiserver's quota admission names when it refuses a write: the quota, and the names requested. */
export interface QuotaRefusal {
  readonly quota: string;
  readonly names: readonly string[];
}

/**
 * The quota refusal in a Status message (`pods "web" is forbidden: exceeded quota: team, requested:
 * pods=1,requests.cpu=500m, used: …, limited: …`), if it is one: the words must follow `is forbidden: `
 * directly, so a name in a refusal of another kind cannot pass for one.
 */
export function quotaRefusalOf(message: string): QuotaRefusal | undefined {
  const match = / is forbidden: exceeded quota: ([a-z0-9.-]+), requested: (\S+), used: /.exec(message);
  if (!match) return undefined;
  const names = match[2]!.split(',').map((pair) => pair.slice(0, pair.indexOf('=')));
  return names.every(Boolean) ? { quota: match[1]!, names } : undefined;
}
