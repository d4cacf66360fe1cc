/**
 * A duration as kube-apiserver prints it in a Table's `Age` column (apimachinery's `HumanDuration`): two or
 * three significant figures, from `45s` through `7m12s`, `5h4m` and `3d6h` to `2y10d`. The router prints
 * the age of a moved object from its first creation time this way, so `kubectl get` shows what one
 * apiserver would.
 */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.trunc(milliseconds / 1000);
  // Up to a second in the future is a clock skew between machines: "now".
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return withRest(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return withRest(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return withRest(days, 'd', hours % 24, 'h');
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return withRest(years, 'y', days % 365, 'd');
  return `${years}y`;
}

function withRest(count: number, unit: string, rest: number, restUnit: string): string {
  return rest === 0 ? `${count}${unit}` : `${count}${unit}${rest}${restUnit}`;
}
