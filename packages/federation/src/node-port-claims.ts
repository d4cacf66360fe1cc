import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

import { NODE_PORT_CLAIM_LABEL, NODE_PORTS_OF_ANNOTATION } from '@cellfed/api';

import type { KubeObject } from './kube-object.ts';

interface ServicePort {
  name?: string;
  protocol?: string;
  port?: number;
  nodePort?: number;
}

export interface ServiceSpec {
  type?: string;
  ports?: ServicePort[];
  externalTrafficPolicy?: string;
  healthCheckNodePort?: number;
  allocateLoadBalancerNodePorts?: boolean;
  [field: string]: unknown;
}

export interface Service extends KubeObject {
  spec?: ServiceSpec;
}

/**
 * Whether an apiserver gives this Service node ports: a NodePort; a LoadBalancer that does not opt out
 * (`allocateLoadBalancerNodePorts: false`), names some itself, or has an external traffic policy `Local`
 * (its health-check port is a node port whatever the opt-out says).
 */
export function hasNodePorts(spec: ServiceSpec | undefined): boolean {
  if (spec?.type === 'NodePort') return true;
  if (spec?.type !== 'LoadBalancer') return false;
  return (
    spec.allocateLoadBalancerNodePorts !== false ||
    spec.externalTrafficPolicy === 'Local' ||
    nodePortsOf(spec).length > 0
  );
}

/** Every node port a Service holds: its ports' and its health check's. */
export function nodePortsOf(spec: ServiceSpec | undefined): number[] {
  const ports = (spec?.ports ?? []).map((port) => port.nodePort ?? 0);
  if (spec?.healthCheckNodePort) ports.push(spec.healthCheckNodePort);
  return ports.filter((port) => port > 0);
}

/** A Service by namespace and name: the federation's Service, or the claim of its node ports. */
export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Where the claim of a Service's node ports is: in cellfed's own namespace of the control plane (so no
 * quota, policy or Service of the Service's namespace there judges it), under a name the Service's
 * namespace and name hash to. SHA-256, so no tenant can find a name of its own that lands on another's
 * claim; the claim also names its Service (`nodePortsOf`), and a claim that names another is never used.
 */
export function nodePortClaimRef(claimsNamespace: string, service: ServiceRef): ServiceRef {
  const hash = bytesToHex(sha256(utf8ToBytes(`${service.namespace}/${service.name}`)));
  return { namespace: claimsNamespace, name: `node-ports-${hash.slice(0, 40)}` };
}

/** The Service whose node ports a claim holds (its annotation); undefined if it is no claim. */
export function claimedService(claim: KubeObject | undefined): ServiceRef | undefined {
  if (!isNodePortClaim(claim)) return undefined;
  const of = claim?.metadata.annotations?.[NODE_PORTS_OF_ANNOTATION] ?? '';
  const slash = of.indexOf('/');
  return slash > 0 ? { namespace: of.slice(0, slash), name: of.slice(slash + 1) } : undefined;
}

/**
 * The claim of `service`'s node ports, at `ref`: a Service with only what the allocator reads (its type,
 * ports, traffic policy, health-check port), no selector (the control plane's endpoint controllers leave it
 * alone) and no cluster IP of the Service's. Ports keep their order, so the allocator's refusal names the
 * field the caller wrote (`spec.ports[1].nodePort`). `keep`: the node ports the claim may carry as they
 * are; any other is left for the allocator to choose (a port the cell chose, not the caller).
 */
export function nodePortClaim(
  service: Service,
  ref: ServiceRef,
  keep: (port: number) => boolean = () => true,
): Service & { spec: ServiceSpec } {
  const spec = service.spec ?? {};
  // A port written that no apiserver allows (0 is "pick one") stays, for the allocator to refuse in its words.
  const kept = (port: number | undefined) =>
    port !== undefined && port !== 0 && keep(port) ? port : undefined;
  const claim: ServiceSpec = {
    type: spec.type,
    ports: (spec.ports ?? []).map((port) => {
      const nodePort = kept(port.nodePort);
      return {
        ...(port.name !== undefined ? { name: port.name } : {}),
        ...(port.protocol !== undefined ? { protocol: port.protocol } : {}),
        ...(port.port !== undefined ? { port: port.port } : {}),
        ...(nodePort !== undefined ? { nodePort } : {}),
      };
    }),
  };
  if (spec.externalTrafficPolicy !== undefined) claim.externalTrafficPolicy = spec.externalTrafficPolicy;
  const healthCheck = kept(spec.healthCheckNodePort);
  if (healthCheck !== undefined) claim.healthCheckNodePort = healthCheck;
  if (spec.allocateLoadBalancerNodePorts !== undefined)
    claim.allocateLoadBalancerNodePorts = spec.allocateLoadBalancerNodePorts;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      labels: { [NODE_PORT_CLAIM_LABEL]: '' },
      annotations: {
        [NODE_PORTS_OF_ANNOTATION]: `${service.metadata.namespace ?? ''}/${service.metadata.name ?? ''}`,
      },
    },
    spec: claim,
  };
}

/** `service`'s spec with the node ports of `claim` (port by port, in order, and the health check's). */
export function withClaimedPorts(service: Service, claim: Service): Service {
  const claimed = claim.spec?.ports ?? [];
  const spec = { ...service.spec };
  spec.ports = (spec.ports ?? []).map((port, index) => {
    const nodePort = claimed[index]?.nodePort;
    return nodePort ? { ...port, nodePort } : port;
  });
  if (claim.spec?.healthCheckNodePort) spec.healthCheckNodePort = claim.spec.healthCheckNodePort;
  return { ...service, spec };
}

/** Whether a Service's node ports are the ones its claim holds, port by port. */
export function holdsClaimedPorts(service: Service, claim: Service): boolean {
  const ports = service.spec?.ports ?? [];
  const claimed = claim.spec?.ports ?? [];
  if (ports.length !== claimed.length) return false;
  if (ports.some((port, index) => (port.nodePort ?? 0) !== (claimed[index]?.nodePort ?? 0))) return false;
  return (service.spec?.healthCheckNodePort ?? 0) === (claim.spec?.healthCheckNodePort ?? 0);
}

/** Whether a control-plane Service is a claim (labelled as one). */
export function isNodePortClaim(object: KubeObject | undefined): boolean {
  return object?.metadata.labels?.[NODE_PORT_CLAIM_LABEL] !== undefined;
}
