import { MIGRATED_AT_ANNOTATION, parseCellSetSpec, type CellSetSpecInput } from '@cellfed/api';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';

import { ApiError, KubeClient } from '@cellfed/controller-kit';
import { MIGRATED, REBALANCE_STATUS_LABEL, RoutingTable } from '@cellfed/hashing';

import { CELL_COMPONENTS, credentialsNamespace } from '@cellfed/cells/chart/cell-identities.ts';
import { cellSecretName } from '@cellfed/cells/control-plane/cell-secrets.ts';
import { LocalCells } from '@cellfed/cells/local/local-cells.ts';
import { createLogger } from '@cellfed/cells/log.ts';
import type { CellEntry } from '@cellfed/cells/provider.ts';
import { METADATA_LIST, type KubeList, type KubeObject, FENCE_POLICY_NAME } from '@cellfed/federation';

import { cellSetSpec, eventually, readCellSet, updateCellSet } from '../helpers/clients.ts';
import { cellAdder, describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { DEPLOYMENTS, deployment, deploymentsIn, startWriter } from '../helpers/deployments.ts';
import { lostWrites, misplaced, placement } from '../helpers/placement.ts';
import {
  isRunning,
  recentTrouble,
  startRebalanceController,
  stopController,
  type ControllerProcess,
} from '../helpers/controller-process.ts';
import { KILL_TEST_LEADER_ELECTION, ReplicaPair } from '../helpers/replica-pair.ts';
import {
  startScratchFederation,
  stopScratchFederation,
  type ScratchFederation,
} from '../helpers/scratch-federation.ts';

const CLUSTER_ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';

interface CellSetObject {
  spec: CellSetSpecInput;
  status?: {
    phase?: string;
    objects?: { total: number; toMove: number; moved: number; pending: number };
    lastRebalance?: { generation: number; moved: number; seconds?: number };
    conditions?: { type: string; status: string; reason: string }[];
  };
}

describeE2e('rebalance controller: cells join and leave live', () => {
  const env = e2eEnv();
  const { provider, runnable } = cellAdder(env);
  const log = createLogger({ level: 'warn' });
  const cellSetName = `rebalance-${Date.now()}`;
  const namespace = `rebalance-${Date.now()}`;
  // Enough that the join moves hundreds under the writer; the scale is the rebalance proof's (5000) and bench's.
  const OBJECTS = 1500;
  const DELETE_AFTER_S = 15;
  const names = Array.from({ length: OBJECTS }, (_, i) => `web-${i}`);
  const controlPlane = KubeClient.fromFile(env.controlPlane.kubeconfig);
  const cells = new Map(env.cells.map((cell) => [cell.id, KubeClient.fromFile(cell.kubeconfig)]));
  let federation: ScratchFederation | undefined;
  let controller: ControllerProcess | undefined;
  let routed: KubeClient | undefined;
  let added: CellEntry | undefined;
  let writerLoops: ReturnType<typeof startWriter> | undefined;
  // The kill -9 test's replicas. Slow enough that three crashes land mid-rebalance.
  const replicas = new ReplicaPair((index) =>
    startRebalanceController(env, {
      args: [
        ...['--cellset', cellSetName, '--delete-after', '1h', '--window', '8', '--rate', '15'],
        ...KILL_TEST_LEADER_ELECTION,
      ],
      logFile: join(env.dir, `${cellSetName}-replica-${index}.log`),
    }),
  );
  const ids = () => env.cells.map((cell) => cell.id) as [string, string, string];
  // A shared object the CellSet names: every cell gets it before anything moves into it, and keeps it in step.
  const sharedRole = `${cellSetName}-shared`;
  const withShared = (spec: ReturnType<typeof cellSetSpec>) => ({
    ...spec,
    sharedResources: [{ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' }],
  });
  const roleRules = (verbs: string[]) => [{ apiGroups: ['apps'], resources: ['deployments'], verbs }];
  const sharedRoleIn = (client: KubeClient) =>
    client
      .request<KubeObject & { rules?: unknown }>('GET', `${CLUSTER_ROLES}/${sharedRole}`)
      .catch((error) => {
        if (error instanceof ApiError && error.statusCode === 404) return undefined;
        throw error;
      });
  /** Waits for the CellSet's spec to satisfy `done`; a timeout says where the rebalance stood. */
  const untilSpec = async (what: string, done: (spec: CellSetSpecInput) => boolean, timeoutMs = 180_000) => {
    let last: CellSetObject | undefined;
    try {
      return await eventually(
        what,
        async () => {
          last = await cellSet();
          return done(last.spec) ? last : undefined;
        },
        timeoutMs,
      );
    } catch (error) {
      const running = [controller, ...replicas.started].filter(
        (app): app is ControllerProcess => app !== undefined && isRunning(app.child),
      );
      throw new Error(
        [
          `${(error as Error).message}; the CellSet's status then: ${JSON.stringify(last?.status)}`,
          ...running.map(
            (app) =>
              `controller pid ${app.child.pid}: ${recentTrouble(app.lines).join(' | ') || 'no warnings'}`,
          ),
        ].join('\n'),
        { cause: error },
      );
    }
  };
  /** Cells 1–3 Normal and the added cell in `state` (absent when undefined). */
  const withAdded = (state?: 'Normal' | 'Joining' | 'Draining') => {
    const [one, two, three] = ids();
    return withShared(
      cellSetSpec({
        [one]: 'Normal',
        [two]: 'Normal',
        [three]: 'Normal',
        ...(state ? { [added!.id]: state } : {}),
      }),
    );
  };
  const setAdded = (state: 'Joining' | 'Draining') =>
    updateCellSet(env.controlPlane.kubeconfig, cellSetName, withAdded(state));
  const stateOf = (spec: CellSetSpecInput, id: string) => spec.cells.find((cell) => cell.id === id)?.state;
  /** Every acknowledged write is in the object the router serves now. */
  const expectNoLostWrites = async (writer: ReturnType<typeof startWriter>) => {
    expect(await lostWrites(routed!, namespace, writer)).toEqual([]);
    expect(writer.acknowledged.size).toBeGreaterThan(50);
  };

  const cellSet = async () => (await readCellSet(env.controlPlane.kubeconfig, cellSetName)) as CellSetObject;
  const placementNow = () => placement(cells, namespace);
  const expectEveryObjectWhereTheRingSays = async (spec: CellSetSpecInput) => {
    const { wrong, found } = await misplaced(cells, namespace, names, spec);
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(found).toBe(OBJECTS);
  };

  afterAll(async () => {
    await writerLoops?.stop().catch(() => undefined);
    await replicas.stop();
    await stopController(controller);
    await stopScratchFederation(env, federation, { cellSetName, namespace });
    await controlPlane.request('DELETE', `${CLUSTER_ROLES}/${sharedRole}`).catch(() => undefined);
    if (added) await provider.removeCell({ dir: env.dir, id: added.id, log });
    for (const client of [controlPlane, routed, ...cells.values()]) await client?.close();
  });

  runnable(
    `a 4th cell joins under ${OBJECTS} Deployments and a concurrent writer: every object ends where the ring says, none lost, none doubled`,
    async () => {
      const [one, two, three] = env.cells.map((cell) => cell.id) as [string, string, string];
      const threeCells = withShared(cellSetSpec({ [one]: 'Normal', [two]: 'Normal', [three]: 'Normal' }));
      await controlPlane.request('POST', CLUSTER_ROLES, {
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: sharedRole },
          rules: roleRules(['get']),
        },
      });
      federation = await startScratchFederation(env, {
        cellSetName,
        spec: threeCells,
        namespace,
        deployments: names,
        cells: [one, two, three],
      });
      routed = federation.routed;
      controller = await startRebalanceController(env, {
        args: [
          ...['--cellset', cellSetName, '--delete-after', `${DELETE_AFTER_S}s`, '--leader-elect', 'false'],
          ...['--mirror-resync', '2s'],
        ],
        cells: [one, two, three],
        logFile: join(env.dir, `${cellSetName}-controller.log`),
      });
      await eventually('the CellSet to be reported Stable', async () =>
        (await cellSet()).status?.phase === 'Stable' ? true : undefined,
      );

      // The writer runs from before the new cell exists until after the rebalance ends.
      const writer = startWriter(routed, namespace, names, 6);
      const counts: number[] = [];
      let counting = true;
      const counter = (async () => {
        while (counting) {
          const list = await routed!.request<KubeList>(
            'GET',
            `${DEPLOYMENTS}/namespaces/${namespace}/deployments`,
            {
              accept: METADATA_LIST,
            },
          );
          counts.push(list.items.length);
          await sleep(250);
        }
      })();

      added = await provider.addCell({ dir: env.dir, controllerManager: false, log });
      const four = added.id;
      cells.set(four, KubeClient.fromFile(added.kubeconfig));
      const started = Date.now();
      await setAdded('Joining');
      await untilSpec('the 4th cell to turn Normal', (spec) => stateOf(spec, four) === 'Normal');
      const seconds = (Date.now() - started) / 1000;
      // The old copies of the last moves are not deleteAfter old yet (read now: the checks below take long
      // enough on a loaded machine for all of them to go).
      const leftoversAtTheEnd = (await placementNow()).leftovers.length;
      await sleep(2000);
      counting = false;
      await counter;
      await writer.stop();

      // The mirror put the namespace into the new cell before anything moved into it.
      const namespaceInFour = await cells
        .get(four)!
        .request<KubeObject>('GET', `/api/v1/namespaces/${namespace}`);
      expect(namespaceInFour.metadata.labels?.['cellfed.io/mirrored-from']).toBe('control-plane');
      // And the shared ClusterRole, no later than the first object that moved in.
      const roleInFour = await sharedRoleIn(cells.get(four)!);
      expect(roleInFour?.rules).toEqual(roleRules(['get']));
      expect(roleInFour?.metadata.labels?.['cellfed.io/mirrored-from']).toBe('control-plane');
      // The cell's own RBAC defaults are its own, not the control plane's.
      const ownRole = await cells.get(four)!.request<KubeObject>('GET', `${CLUSTER_ROLES}/system:basic-user`);
      expect(ownRole.metadata.labels?.['cellfed.io/mirrored-from']).toBeUndefined();
      const firstMovedIn = [...(await deploymentsIn(cells.get(four)!, namespace)).values()]
        .map((metadata) => Date.parse(metadata.creationTimestamp ?? ''))
        .sort((a, b) => a - b)[0]!;
      expect(Date.parse(roleInFour!.metadata.creationTimestamp ?? '')).toBeLessThanOrEqual(firstMovedIn);
      const allNormal = withAdded('Normal');
      await expectEveryObjectWhereTheRingSays(allNormal);
      const table = RoutingTable.fromCellSet(parseCellSetSpec(allNormal));
      const intoFour = names.filter((name) => table.route(table.keyOf({ namespace, name })).oldCell === four);
      expect(intoFour.length).toBeGreaterThan(OBJECTS / 8);
      // The status follows the spec change: the next reconcile reports the finished rebalance.
      const reported = await eventually('the status to report the finished rebalance', async () => {
        const status = (await cellSet()).status;
        return status?.phase === 'Stable' && status.lastRebalance ? status.lastRebalance : undefined;
      });
      expect(reported.generation).toBeGreaterThan(0);
      expect(reported.moved).toBeGreaterThanOrEqual(intoFour.length);
      // Through the router the count never changed.
      expect(counts.length).toBeGreaterThan(4);
      expect(counts.filter((count) => count !== OBJECTS)).toEqual([]);

      // Every acknowledged write is in the object the router serves (no later write was lost).
      await expectNoLostWrites(writer);

      // The old copies stay deleteAfter, then go.
      expect(leftoversAtTheEnd).toBeGreaterThan(0);
      await eventually(
        'the old copies to be deleted after deleteAfter',
        async () => ((await placementNow()).leftovers.length === 0 ? true : undefined),
        (DELETE_AFTER_S + 30) * 1000,
      );
      await expectEveryObjectWhereTheRingSays(allNormal);

      // The shared object stays in step in every cell: changed, then deleted, in the control plane.
      await controlPlane.request('PATCH', `${CLUSTER_ROLES}/${sharedRole}`, {
        body: { rules: roleRules(['get', 'list']) },
        contentType: 'application/merge-patch+json',
      });
      const inEveryCell = async (matches: (role: Awaited<ReturnType<typeof sharedRoleIn>>) => boolean) => {
        for (const client of cells.values()) if (!matches(await sharedRoleIn(client))) return undefined;
        return true;
      };
      await eventually('the changed ClusterRole in every cell', () =>
        inEveryCell((role) => isDeepStrictEqual(role?.rules, roleRules(['get', 'list']))),
      );
      await controlPlane.request('DELETE', `${CLUSTER_ROLES}/${sharedRole}`);
      await eventually('the deleted ClusterRole gone from every cell', () =>
        inEveryCell((role) => role === undefined),
      );
      process.stdout.write(
        `rebalance: ${intoFour.length} moved in ${seconds.toFixed(1)} s; writer made ${writer.writes()} writes, ${writer.refused()} fenced (429)\n`,
      );
    },
    300_000,
  );

  runnable(
    'each cell fences a moved copy itself: only the rebalance controller writes to it, and the router answers anyone else 429',
    async () => {
      // What the router sent on a reading of "not started" can reach the cell after the hand-over; the cell's
      // policy, checked against the object as stored, must refuse it. Made here without a race: a copy in
      // its rightful cell is labelled by hand, as the controller would label an old copy.
      const [one] = ids();
      const cell = cells.get(one)!;
      const table = RoutingTable.fromCellSet(parseCellSetSpec(withAdded('Normal')));
      const name = names.find((candidate) => {
        const { oldCell, newCell } = table.route(table.keyOf({ namespace, name: candidate }));
        return oldCell === one && newCell === one;
      })!;
      const path = `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${name}`;
      for (const [id, client] of cells) {
        const policy = await client.request<KubeObject>(
          'GET',
          `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${FENCE_POLICY_NAME}`,
        );
        expect({ id, name: policy.metadata.name }).toEqual({ id, name: FENCE_POLICY_NAME });
      }
      // The controller's identity in the cell (the cell's kubeconfig Secret): exempt.
      const asController = async (method: 'PATCH' | 'DELETE', metadata?: Record<string, unknown>) => {
        const answer = await cell.raw(method, path, {
          headers: {
            'impersonate-user': 'cellfed-rebalance-controller',
            'impersonate-group': 'system:masters',
            'content-type': 'application/merge-patch+json',
          },
          body: metadata ? JSON.stringify({ metadata }) : null,
        });
        await answer.body.dump();
        return answer.statusCode;
      };
      const patch = (client: KubeClient, value: string) =>
        client.request<KubeObject>('PATCH', path, {
          body: { metadata: { annotations: { 'e2e.cellfed.io/fence': value } } },
          contentType: 'application/merge-patch+json',
        });
      const refusal = (promise: Promise<unknown>) =>
        promise.then(
          () => undefined,
          (error: unknown) => (error instanceof ApiError ? error : Promise.reject(error)),
        );

      // The label with the controller's own mark, in one write, as the controller fences.
      expect(
        await asController('PATCH', {
          labels: { [REBALANCE_STATUS_LABEL]: MIGRATED },
          annotations: { [MIGRATED_AT_ANNOTATION]: new Date().toISOString() },
        }),
      ).toBe(200);
      try {
        // Straight to the cell, as the admin: refused, naming the policy; a delete too.
        const direct = await refusal(patch(cell, 'admin'));
        expect(direct?.statusCode).toBe(403);
        expect(direct?.status.message).toContain(`ValidatingAdmissionPolicy '${FENCE_POLICY_NAME}'`);
        expect(direct?.status.message).toContain(`"${name}" is migrated to another cell`);
        expect((await refusal(cell.request('DELETE', path)))?.statusCode).toBe(403);
        // Through the router (case 4: no label read, straight to the cell): the fence's answer, retried by clients.
        const routedRefusal = await refusal(patch(routed!, 'router'));
        expect(routedRefusal?.statusCode).toBe(429);
        expect(routedRefusal?.status).toMatchObject({ reason: 'TooManyRequests', details: { name } });
        const copy = await cell.request<KubeObject>('GET', path);
        expect(copy.metadata.annotations?.['e2e.cellfed.io/fence']).toBeUndefined();
      } finally {
        expect(await asController('PATCH', { labels: { [REBALANCE_STATUS_LABEL]: null } })).toBe(200);
      }
      // Unfenced, the same write goes through.
      expect((await patch(routed!, 'router')).metadata.annotations?.['e2e.cellfed.io/fence']).toBe('router');

      // A namespace being deleted is emptied by the cell's namespace controller, fenced copies included.
      const doomed = `${namespace}-doomed`;
      await cell.request('POST', '/api/v1/namespaces', { body: { metadata: { name: doomed } } });
      await cell.request('POST', `${DEPLOYMENTS}/namespaces/${doomed}/deployments`, {
        body: {
          ...deployment('fenced'),
          metadata: {
            name: 'fenced',
            labels: { [REBALANCE_STATUS_LABEL]: MIGRATED },
            annotations: { [MIGRATED_AT_ANNOTATION]: new Date().toISOString() },
          },
        },
      });
      await cell.request('DELETE', `/api/v1/namespaces/${doomed}`);
      await eventually('the namespace holding a fenced copy to be deleted', async () =>
        (await refusal(cell.request('GET', `/api/v1/namespaces/${doomed}`)))?.statusCode === 404
          ? true
          : undefined,
      );
    },
    120_000,
  );

  runnable(
    'a drained cell ends empty of primaries and leaves the CellSet; its Secret is left for the operator',
    async () => {
      const four = added!.id;
      await setAdded('Draining');
      await untilSpec('the drained cell to leave the CellSet', (spec) => stateOf(spec, four) === undefined);
      const leftInFour = [...(await deploymentsIn(cells.get(four)!, namespace)).values()];
      expect(leftInFour.filter((metadata) => metadata.labels?.[REBALANCE_STATUS_LABEL] !== MIGRATED)).toEqual(
        [],
      );
      await expectEveryObjectWhereTheRingSays(withAdded());
      const events = await controlPlane.request<KubeList<KubeObject & { reason?: string; note?: string }>>(
        'GET',
        '/apis/events.k8s.io/v1/namespaces/default/events',
      );
      expect(
        events.items.some(
          (event) => event.reason === 'CellRemoved' && event.note?.includes(`cell ${four} drained`) === true,
        ),
      ).toBe(true);
      // The Secrets stay (one per component): the operator deletes them with the cell.
      for (const component of CELL_COMPONENTS) {
        const secret = await controlPlane.request<KubeObject>(
          'GET',
          `/api/v1/namespaces/${credentialsNamespace(component)}/secrets/${cellSecretName(four)}`,
        );
        expect(secret.metadata.name).toBe(cellSecretName(four));
      }
    },
    180_000,
  );

  runnable(
    'kill -9 of the leading controller three times mid-migration: a second replica takes over and nothing is lost or doubled',
    async () => {
      const four = added!.id;
      await stopController(controller);
      controller = undefined;
      await replicas.run();
      await replicas.leaderWithStandby();
      writerLoops = startWriter(routed!, namespace, names, 4);
      const fencedNow = async () => {
        let migrating = 0;
        for (const [cell, client] of cells) {
          if (cell === four) continue;
          for (const metadata of (await deploymentsIn(client, namespace)).values())
            if (metadata.labels?.[REBALANCE_STATUS_LABEL] === 'migrating') migrating++;
        }
        return migrating;
      };
      await setAdded('Joining');
      const kills: { fenced: number; takeoverMs: number }[] = [];
      for (let kill = 0; kill < 3; kill++) {
        const current = await replicas.leaderWithStandby();
        const fenced = await eventually('objects fenced mid-migration', async () => {
          const count = await fencedNow();
          return count > 0 ? count : undefined;
        });
        const { takeoverMs } = await replicas.killLeader(current);
        kills.push({ fenced, takeoverMs });
      }
      await untilSpec(
        'the 4th cell to turn Normal after three crashes',
        (spec) => stateOf(spec, four) === 'Normal',
      );
      await writerLoops.stop();
      await expectEveryObjectWhereTheRingSays(withAdded('Normal'));
      // No copy was left half-made: every copy in the new cell is committed.
      const uncommitted = [...(await deploymentsIn(cells.get(four)!, namespace)).values()].filter(
        (metadata) => metadata.annotations?.['cellfed.io/copied-from'] !== undefined,
      );
      expect(uncommitted).toEqual([]);
      await expectNoLostWrites(writerLoops);
      for (const { takeoverMs } of kills) expect(takeoverMs).toBeLessThan(15_000);
      process.stdout.write(
        `rebalance kill -9: ${JSON.stringify({ kills, leadershipChanges: replicas.leadershipChanges() })}\n`,
      );
    },
    300_000,
  );

  runnable(
    'a cell’s apiserver stopped mid-migration and restarted: the rebalance converges',
    async () => {
      const [one] = ids();
      const four = added!.id;
      // The kill test's pair goes on leading; a replica that exited meanwhile is replaced first.
      await replicas.leaderWithStandby();
      await setAdded('Draining');
      const local = LocalCells.open(env.dir);
      await eventually('the drain to be under way', async () =>
        ((await cellSet()).status?.objects?.moved ?? 0) > 0 ? true : undefined,
      );
      await local.stop(one, 'kube-apiserver');
      await sleep(5000);
      await local.start(one, 'kube-apiserver');
      await untilSpec('the drained cell to leave the CellSet', (spec) => stateOf(spec, four) === undefined);
      await expectEveryObjectWhereTheRingSays(withAdded());
    },
    240_000,
  );
});
