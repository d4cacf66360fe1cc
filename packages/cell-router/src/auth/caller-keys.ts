import type { UserInfo } from './user-info.ts';

const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):[^:]+$/;

/**
 * The keys a caller's shares are counted under: its user name, and for a ServiceAccount its namespace too,
 * so that a tenant who may mint ServiceAccounts in its namespace does not get a share per account.
 */
export function callerKeys(user: Pick<UserInfo, 'username'>): string[] {
  const serviceAccount = SERVICE_ACCOUNT.exec(user.username);
  return serviceAccount
    ? [`user:${user.username}`, `serviceaccounts:${serviceAccount[1]!}`]
    : [`user:${user.username}`];
}

/**
 * The one key a caller's fair share is taken under (auth/fair-queue.ts): a ServiceAccount's namespace, any
 * other user's name. Every account a tenant mints is one flow, not one flow each.
 */
export function flowOf(user: Pick<UserInfo, 'username'>): string {
  return callerKeys(user).at(-1)!;
}
