/** How many bytes of request bodies the router holds at once. */
export interface BodyBudgetOptions {
  /** For everyone together: the bound on the router's memory for bodies, whoever sends them. */
  readonly totalBytes: number;
  /** For one caller key (auth/caller-keys.ts): what one identity, or one namespace's ServiceAccounts, may hold. */
  readonly perCallerBytes: number;
}

/**
 * The bytes of request bodies the router holds, bounded in total and per caller (kube-apiserver holds a body
 * only for a caller it has authorized, and only one at a time per request; the router holds bodies to read
 * them whole, so it counts them). A caller past its share, or any caller while the total is spent, gets a
 * 429 and sends again later: nothing is lost, and no caller can make the router hold more than
 * `totalBytes`. Memory is bounded by the callers holding a body: an entry goes with its last byte.
 */
export class BodyBudget {
  private readonly options: BodyBudgetOptions;
  private heldBytes = 0;
  private readonly byKey = new Map<string, number>();

  constructor(options: BodyBudgetOptions) {
    this.options = options;
  }

  /** Takes `bytes` for every key, or nothing (false) when that would pass the total or a key's share. */
  take(keys: readonly string[], bytes: number): boolean {
    if (this.heldBytes + bytes > this.options.totalBytes) return false;
    if (keys.some((key) => (this.byKey.get(key) ?? 0) + bytes > this.options.perCallerBytes)) return false;
    this.heldBytes += bytes;
    for (const key of keys) this.byKey.set(key, (this.byKey.get(key) ?? 0) + bytes);
    return true;
  }

  /** Gives back what {@link take} took. */
  give(keys: readonly string[], bytes: number): void {
    this.heldBytes -= bytes;
    for (const key of keys) {
      const left = (this.byKey.get(key) ?? 0) - bytes;
      if (left > 0) this.byKey.set(key, left);
      else this.byKey.delete(key);
    }
  }

  /** Bytes held now (a gauge, and what the tests check). */
  get held(): number {
    return this.heldBytes;
  }

  /** Caller keys holding something now. */
  get callers(): number {
    return this.byKey.size;
  }
}
