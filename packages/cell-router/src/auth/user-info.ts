/** Who is calling, as the control plane would see them. */
export interface UserInfo {
  username: string;
  /** The user's uid, when the authenticator knows one (a token's; certificates carry none). */
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

// Anything a header value may not hold: NUL, CR, LF and the other control characters but tab.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Which part of `user` holds a control character (it cannot be sent on in a header), if any. */
export function unsafeIdentityField(user: UserInfo): string | undefined {
  if (CONTROL.test(user.username)) return 'user name';
  if (user.uid !== undefined && CONTROL.test(user.uid)) return 'uid';
  if (user.groups.some((group) => CONTROL.test(group))) return 'group';
  for (const [key, values] of Object.entries(user.extra))
    if (CONTROL.test(key) || values.some((value) => CONTROL.test(value))) return 'extra';
  return undefined;
}
