import type { RequestInfo } from '../request/request-info.ts';

/**
 * The subresources kube-apiserver serves through its upgrade-aware proxy: a pod's exec, attach and
 * port-forward, and the proxy subresources of pods, services and nodes. Only these are relayed as upgrades;
 * kube-apiserver serves any other request that carries `Upgrade` as a plain request on a connection it keeps
 * reading, which a relay cannot do safely (see docs/security.md), so the router refuses it with a Status.
 */
const UPGRADES: Readonly<Record<string, readonly string[]>> = {
  pods: ['exec', 'attach', 'portforward', 'proxy'],
  services: ['proxy'],
  nodes: ['proxy'],
};

/** Whether a request with `Upgrade` is one the router relays as an upgrade. */
export function isUpgradable(info: RequestInfo): boolean {
  if (!info.isResourceRequest || info.apiGroup !== '' || info.name === '') return false;
  // `pods/x/proxy/…` parses as the verb proxy (the path form), or as a get of the subresource proxy.
  const subresource = info.verb === 'proxy' ? 'proxy' : info.subresource;
  return UPGRADES[info.resource]?.includes(subresource) ?? false;
}
