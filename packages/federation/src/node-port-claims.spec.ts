import { NODE_PORT_CLAIM_LABEL, NODE_PORTS_OF_ANNOTATION } from '@cellfed/api';

import {
  claimedService,
  hasNodePorts,
  holdsClaimedPorts,
  nodePortClaim,
  nodePortClaimRef,
  nodePortsOf,
  withClaimedPorts,
  type Service,
} from './node-port-claims.ts';

const service = (spec: Service['spec']): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
  spec,
});

describe('node-port claims', () => {
  it('knows which Services an apiserver gives node ports', () => {
    expect(hasNodePorts({ type: 'NodePort' })).toBe(true);
    expect(hasNodePorts({ type: 'LoadBalancer' })).toBe(true);
    expect(hasNodePorts({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: false })).toBe(false);
    expect(
      hasNodePorts({
        type: 'LoadBalancer',
        allocateLoadBalancerNodePorts: false,
        ports: [{ nodePort: 30001 }],
      }),
    ).toBe(true);
    expect(
      hasNodePorts({
        type: 'LoadBalancer',
        allocateLoadBalancerNodePorts: false,
        externalTrafficPolicy: 'Local',
      }),
    ).toBe(true);
    expect(hasNodePorts({ type: 'ClusterIP', ports: [{ port: 80 }] })).toBe(false);
    expect(hasNodePorts(undefined)).toBe(false);
  });

  it('claims only what the allocator reads, port by port, leaving the ports not kept to the allocator', () => {
    const web = service({
      type: 'LoadBalancer',
      selector: { app: 'web' },
      clusterIP: '10.0.0.9',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32000,
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 },
        { name: 'https', port: 443, protocol: 'TCP', nodePort: 30443 },
      ],
    });
    expect(nodePortsOf(web.spec)).toEqual([30080, 30443, 32000]);
    const ref = nodePortClaimRef('cellfed-system', { namespace: 'shop', name: 'web' });
    const claim = nodePortClaim(web, ref, (port) => port !== 30443);
    expect(claim).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        ...ref,
        labels: { [NODE_PORT_CLAIM_LABEL]: '' },
        annotations: { [NODE_PORTS_OF_ANNOTATION]: 'shop/web' },
      },
      spec: {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32000,
        ports: [
          { name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 },
          { name: 'https', port: 443, protocol: 'TCP' },
        ],
      },
    });
    expect(holdsClaimedPorts(web, claim)).toBe(false);
  });

  it('names a claim in cellfed’s namespace by a hash of its Service, and reads back whose it is', () => {
    const ref = nodePortClaimRef('cellfed-system', { namespace: 'shop', name: 'web' });
    expect(ref.namespace).toBe('cellfed-system');
    expect(ref.name).toMatch(/^node-ports-[0-9a-f]{40}$/);
    // "a/b-c" and "a-b/c" are different Services: the slash is part of what is hashed.
    expect(nodePortClaimRef('x', { namespace: 'a', name: 'b-c' }).name).not.toBe(
      nodePortClaimRef('x', { namespace: 'a-b', name: 'c' }).name,
    );
    const claim = nodePortClaim(service({ type: 'NodePort', ports: [{ port: 80 }] }), ref);
    expect(claimedService(claim)).toEqual({ namespace: 'shop', name: 'web' });
    // Not a claim without the label, whatever it names.
    expect(claimedService({ ...claim, metadata: { ...claim.metadata, labels: {} } })).toBeUndefined();
    expect(
      claimedService({
        ...claim,
        metadata: { ...claim.metadata, annotations: { [NODE_PORTS_OF_ANNOTATION]: 'x' } },
      }),
    ).toBeUndefined();
  });

  it('gives a Service the ports its claim holds, keeping everything else of it', () => {
    const web = service({ type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80 }, { port: 81 }] });
    const claimed = service({
      ports: [
        { port: 80, nodePort: 30000 },
        { port: 81, nodePort: 30001 },
      ],
    });
    const given = withClaimedPorts(web, claimed);
    expect(given.spec).toEqual({
      type: 'NodePort',
      selector: { app: 'web' },
      ports: [
        { port: 80, nodePort: 30000 },
        { port: 81, nodePort: 30001 },
      ],
    });
    expect(holdsClaimedPorts(given, claimed)).toBe(true);
    expect(web.spec?.ports?.[0]?.nodePort).toBeUndefined();
  });
});
