/**
 * The spec fields a commit sets back from a copy's `cellfed.io/held-spec` (@cellfed/api's
 * HELD_SPEC_ANNOTATION): only what the rebalance controller holds back, a Job's or CronJob's `suspend`. The
 * commit writes it as cellfed's components, past the admission policies and webhooks clients' writes meet,
 * so nothing else an annotation holds is ever written: a held spec cannot widen what admission allows. Any
 * other field (or one that does not parse) is dropped, which leaves the copy as it was created (suspended).
 */
export function heldSpecPatch(text: string | undefined): { suspend?: boolean | null } | undefined {
  if (text === undefined) return undefined;
  let held: unknown;
  try {
    held = JSON.parse(text);
  } catch {
    return {};
  }
  const suspend = (held as { suspend?: unknown } | null)?.suspend;
  return typeof suspend === 'boolean' || suspend === null ? { suspend } : {};
}
