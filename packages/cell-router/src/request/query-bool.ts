/**
 * A boolean query parameter as kube-apiserver reads it (its `Convert_Slice_string_To_bool`): absent is false,
 * and of a given value only `0` and `false` (any case) are; anything else, the empty string too, is true
 * (`watch=True`, `watch=yes` and `watch=` all watch). `value` is the first value, as `URLSearchParams.get`
 * and Go's decoder both take it.
 */
export function queryBool(value: string | null): boolean {
  if (value === null) return false;
  return value !== '0' && value.toLowerCase() !== 'false';
}
