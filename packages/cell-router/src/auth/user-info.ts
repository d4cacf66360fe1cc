/** Who is calling, as the control plane would see them. */
export interface UserInfo {
  username: string;
  /** The user's uid, when the authenticator knows one (a token's; certificates carry none). */
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/**
 * What a header value cannot carry as it is: NUL, CR, LF and the other control characters but tab, and a
 * space or tab at either end, which the cell's HTTP parser trims (the cell would act as another name than
 * the one the control plane authorized: `jane ` as `jane`, or as a component's name it exempts).
 */
// eslint-disable-next-line no-control-regex
const UNSENDABLE = /[\x00-\x08\x0a-\x1f\x7f]|^[ \t]|[ \t]$/;

/** Which part of `user` the router cannot send on in a header as it is (see UNSENDABLE), if any. */
export function unsafeIdentityField(user: UserInfo): string | undefined {
  if (UNSENDABLE.test(user.username)) return 'user name';
  if (user.uid !== undefined && UNSENDABLE.test(user.uid)) return 'uid';
  if (user.groups.some((group) => UNSENDABLE.test(group))) return 'group';
  for (const [key, values] of Object.entries(user.extra))
    if (UNSENDABLE.test(key) || values.some((value) => UNSENDABLE.test(value))) return 'extra';
  return undefined;
}
