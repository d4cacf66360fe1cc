const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;

/**
 * Milliseconds of a Go-style duration (`12h`, `90s`, `1h30m`, `250ms`), as Kubernetes flags take them;
 * undefined when the text is not one.
 */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * UNITS[unit!]!;
  }
  return Math.round(total);
}

/** `ms` as the largest whole unit that states it exactly (`10s`, `12h`, `250ms`): how defaults are shown. */
export function formatDuration(ms: number): string {
  for (const unit of ['h', 'm', 's'] as const)
    if (ms % UNITS[unit]! === 0) return `${ms / UNITS[unit]!}${unit}`;
  return `${ms}ms`;
}
