import {
  NODE_PORT_CLAIM_LABEL,
  NODE_PORTS_CLAIMED_AT_ANNOTATION,
  NODE_PORTS_OF_ANNOTATION,
  parseCellSetSpec,
} from '@cellfed/api';
import { ApiError } from '@cellfed/controller-kit';
import { FakeCell, FakeClock, memoryLogger } from '@cellfed/controller-kit/testing';
import { nodePortClaimRef, type KubeObject, type Service } from '@cellfed/federation';

import { PlanHolder } from '../rebalance-plan.ts';
import {
  CLAIM_GRACE_MS,
  CLAIM_RECHECK_MS,
  NodePortClaimReconciler,
  type NodePortClaimReconcilerOptions,
} from './node-port-claim-reconciler.ts';

/** The federation's Service, in a cell. */
const PATH = '/api/v1/namespaces/shop/services/web';
/** Its claim, in cellfed's namespace of the control plane. */
const CLAIM = nodePortClaimRef('cellfed-system', { namespace: 'shop', name: 'web' });
const CLAIM_PATH = `/api/v1/namespaces/${CLAIM.namespace}/services/${CLAIM.name}`;
const MADE = Date.parse('2026-12-07T00:00:00Z');

function setup(options: { down?: string } = {}) {
  const plans = new PlanHolder();
  plans.load(
    parseCellSetSpec({
      cells: ['a', 'b'].map((id) => ({
        id,
        state: id === options.down ? ('Down' as const) : ('Normal' as const),
        kubeconfigSecretRef: { name: id },
      })),
    }),
    1,
  );
  const cells = new Map(['a', 'b'].map((id) => [id, new FakeCell(id)]));
  const controlPlane = new FakeCell('control-plane');
  const clock = new FakeClock(MADE);
  const events: string[] = [];
  const reconcilerOptions: NodePortClaimReconcilerOptions = {
    plans,
    controlPlane,
    claim: (namespace, name) =>
      controlPlane.get(`/api/v1/namespaces/${namespace}/services/${name}`) as Service | undefined,
    cell: (id) => {
      const client = cells.get(id);
      return client ? { id, client } : undefined;
    },
    clock,
    record: (type, reason, note) => {
      events.push(`${type} ${reason} ${note}`);
      return Promise.resolve();
    },
  };
  const reconciler = new NodePortClaimReconciler(reconcilerOptions);
  const { logger, lines } = memoryLogger();
  const key = () => ({
    key: CLAIM,
    lane: 'high' as const,
    signal: new AbortController().signal,
    log: logger,
  });
  const reconcile = () => reconciler.reconcile(key());
  const spec = { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] };
  const claim = (labels: Record<string, string> = { [NODE_PORT_CLAIM_LABEL]: '' }) => {
    controlPlane.put(CLAIM_PATH, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        ...CLAIM,
        labels,
        annotations: { [NODE_PORTS_OF_ANNOTATION]: 'shop/web' },
        creationTimestamp: new Date(MADE).toISOString(),
      },
      spec,
    } as KubeObject);
  };
  /** The federation's Service in `cell`; `nodePort`: another than its claim holds. */
  const serviceIn = (cell: string, type = 'NodePort', nodePort = spec.ports[0]!.nodePort) =>
    cells.get(cell)!.put(PATH, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { type, ports: [{ port: 80, nodePort }] },
    } as KubeObject);
  return {
    reconcile,
    reconciler: reconcilerOptions,
    key,
    claim,
    serviceIn,
    clock,
    controlPlane,
    cells,
    lines,
    events,
  };
}

describe('NodePortClaimReconciler', () => {
  it('leaves a claim alone in its first minute, then frees it once no cell holds its Service', async () => {
    const { reconcile, claim, clock, controlPlane, lines } = setup();
    claim();
    expect(await reconcile()).toEqual({ requeueAfterMs: CLAIM_GRACE_MS });
    expect(controlPlane.get(CLAIM_PATH)).toBeDefined();
    await clock.advance(CLAIM_GRACE_MS);
    expect(await reconcile()).toEqual({});
    expect(controlPlane.get(CLAIM_PATH)).toBeUndefined();
    expect(lines.some((line) => String(line['msg']).startsWith('node ports freed'))).toBe(true);
  });

  it('counts the grace from when a create took the claim over', async () => {
    const { reconcile, claim, clock, controlPlane } = setup();
    claim();
    await clock.advance(CLAIM_GRACE_MS);
    const taken = controlPlane.get(CLAIM_PATH)!;
    controlPlane.put(CLAIM_PATH, {
      ...taken,
      metadata: {
        ...taken.metadata,
        annotations: {
          ...taken.metadata.annotations,
          [NODE_PORTS_CLAIMED_AT_ANNOTATION]: new Date(clock.now() - 1000).toISOString(),
        },
      },
    });
    expect(await reconcile()).toEqual({ requeueAfterMs: CLAIM_GRACE_MS - 1000 });
    expect(controlPlane.get(CLAIM_PATH)).toBeDefined();
  });

  it('never frees a claim a write changed since it was read', async () => {
    const { reconciler, claim, clock, controlPlane, key } = setup();
    claim();
    await clock.advance(CLAIM_GRACE_MS);
    const read = structuredClone(controlPlane.get(CLAIM_PATH)!);
    // A create takes the claim over between the collector's read and its delete.
    controlPlane.put(CLAIM_PATH, { ...read, metadata: { ...read.metadata, resourceVersion: undefined } });
    const stale = new NodePortClaimReconciler({ ...reconciler, claim: () => read as Service });
    expect(await stale.reconcile(key())).toEqual({ requeueAfterMs: CLAIM_GRACE_MS });
    expect(controlPlane.get(CLAIM_PATH)).toBeDefined();
  });

  it('keeps a claim whose Service holds node ports in some cell, and looks again later', async () => {
    const { reconcile, claim, serviceIn, clock, controlPlane } = setup();
    claim();
    serviceIn('b');
    await clock.advance(CLAIM_GRACE_MS);
    expect(await reconcile()).toEqual({ requeueAfterMs: CLAIM_RECHECK_MS });
    expect(controlPlane.get(CLAIM_PATH)).toBeDefined();
  });

  it('sets a claim to the ports its Service holds when a write’s outcome never reached the router', async () => {
    const { reconcile, claim, serviceIn, clock, controlPlane, lines } = setup();
    claim();
    serviceIn('a', 'NodePort', 30090);
    await clock.advance(CLAIM_GRACE_MS);
    expect(await reconcile()).toEqual({ requeueAfterMs: CLAIM_RECHECK_MS });
    const held = controlPlane.get(CLAIM_PATH) as Service;
    expect(held.spec?.ports).toEqual([{ port: 80, nodePort: 30090 }]);
    expect(held.metadata.annotations?.[NODE_PORTS_OF_ANNOTATION]).toBe('shop/web');
    expect(lines.some((line) => String(line['msg']).startsWith('node-port claim set'))).toBe(true);
  });

  it('warns on the CellSet when the ports its Service holds are another Service’s too', async () => {
    const { reconcile, claim, serviceIn, clock, controlPlane, events } = setup();
    claim();
    serviceIn('a', 'NodePort', 30090);
    const message = `Service "${CLAIM.name}" is invalid: spec.ports[0].nodePort: Invalid value: 30090: provided port is already allocated`;
    controlPlane.request = () =>
      Promise.reject(new ApiError(422, { reason: 'Invalid', message }, `PUT ${CLAIM_PATH}`));
    await clock.advance(CLAIM_GRACE_MS);
    expect(await reconcile()).toEqual({ requeueAfterMs: CLAIM_RECHECK_MS });
    expect(events).toEqual([
      expect.stringMatching(/^Warning NodePortsShared service shop\/web holds .*30090/),
    ]);
  });

  it('frees a claim whose Service no longer has node ports', async () => {
    const { reconcile, claim, serviceIn, clock, controlPlane } = setup();
    claim();
    serviceIn('a', 'ClusterIP');
    await clock.advance(CLAIM_GRACE_MS);
    await reconcile();
    expect(controlPlane.get(CLAIM_PATH)).toBeUndefined();
  });

  it('frees nothing while a cell is Down (its Services are in backups), nor a Service that is no claim', async () => {
    const down = setup({ down: 'b' });
    down.claim();
    await down.clock.advance(CLAIM_GRACE_MS);
    expect(await down.reconcile()).toEqual({ requeueAfterMs: CLAIM_RECHECK_MS });
    expect(down.controlPlane.get(CLAIM_PATH)).toBeDefined();
    const own = setup();
    own.claim({});
    await own.clock.advance(CLAIM_GRACE_MS);
    expect(await own.reconcile()).toEqual({});
    expect(own.controlPlane.get(CLAIM_PATH)).toBeDefined();
  });
});
