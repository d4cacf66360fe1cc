/** Who is calling, as the control plane would see them. */
export interface UserInfo {
  username: string;
  groups: string[];
  extra: Record<string, string[]>;
}
