import { CONTROL_PLANE_ID } from '../env-file.ts';
import { E2eError, E2eErrorCode } from '../errors.ts';

/**
 * Each apiserver of an environment allocates ClusterIPs from a range no other one uses, so a ClusterIP is
 * unique across the federation, as on one apiserver, and cells' service networks can be joined
 * (docs/governance.md#allocations). The control plane takes 10.96.0.0/16 (kind's default) and cell-N
 * 10.(96+N).0.0/16; 10.244.0.0/16, kind's pod network, stays clear.
 */
const FIRST_SECOND_OCTET = 96;
const LAST_ORDINAL = 243 - FIRST_SECOND_OCTET;

export interface ServiceRange {
  /** `--service-cluster-ip-range` (kind: `networking.serviceSubnet`). */
  cidr: string;
  /** The range's first address: the apiserver's own `default/kubernetes` Service, named in its certificate. */
  apiserverServiceIp: string;
}

export function serviceRangeOf(id: string): ServiceRange {
  const ordinal = id === CONTROL_PLANE_ID ? 0 : Number(/^cell-([1-9]\d*)$/.exec(id)?.[1]);
  if (!Number.isSafeInteger(ordinal) || ordinal > LAST_ORDINAL)
    throw new E2eError(
      E2eErrorCode.InvalidArguments,
      `no service range for "${id}": ids are ${CONTROL_PLANE_ID} or cell-1 … cell-${LAST_ORDINAL}`,
    );
  const prefix = `10.${FIRST_SECOND_OCTET + ordinal}`;
  return { cidr: `${prefix}.0.0/16`, apiserverServiceIp: `${prefix}.0.1` };
}
