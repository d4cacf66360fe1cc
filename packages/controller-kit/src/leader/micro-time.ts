/** metav1.MicroTime: RFC 3339 with exactly six fractional digits, as Leases and Events need. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
