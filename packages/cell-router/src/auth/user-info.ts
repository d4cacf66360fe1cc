/** Who is calling, as the control plane would see them. */
export interface UserInfo {
  username: string;
  /** The user's uid, when the authenticator knows one (a token's; certificates carry none). */
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}
