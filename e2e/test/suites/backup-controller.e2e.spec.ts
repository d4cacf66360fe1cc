import { PROMOTED_FROM_ANNOTATION, SOURCE_RESOURCE_VERSION_ANNOTATION, parseCellSetSpec } from '@cellfed/api';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { ApiError, KubeClient } from '@cellfed/controller-kit';
import { RoutingTable } from '@cellfed/hashing';

import { installCellRbac } from '@cellfed/cells/chart/component-rbac.ts';
import { LocalCells } from '@cellfed/cells/local/local-cells.ts';
import { createLogger } from '@cellfed/cells/log.ts';
import type { CellEntry } from '@cellfed/cells/provider.ts';
import { METADATA_LIST, type KubeList, type KubeObject } from '@cellfed/federation';

import {
  cellSetSpec,
  eventually,
  forEachInParallel,
  readCellSet,
  updateCellSet,
  writeOperatorKubeconfig,
} from '../helpers/clients.ts';
import {
  startBackupController,
  startRebalanceController,
  stopController,
  type ControllerProcess,
} from '../helpers/controller-process.ts';
import { cellAdder, describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { DEPLOYMENTS, SEQ, deploymentsIn, startWriter } from '../helpers/deployments.ts';
import { backupsIn, everyObjectBackedUp as everyObjectBackedUpIn } from '../helpers/placement.ts';
import { kubectl } from '../helpers/router-process.ts';
import {
  startScratchFederation,
  stopScratchFederation,
  type ScratchFederation,
} from '../helpers/scratch-federation.ts';

/** A label the test owns by server-side apply (field manager `e2e-applier`). */
const APPLIED = 'e2e.cellfed.io/applied';

/** `kubectl cells` as published (`nx run kubectl-cells:build`, which the e2e target depends on). */
const cellsPlugin = (args: string[]) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const plugin = fileURLToPath(
      new URL('../../../packages/kubectl-cells/dist/kubectl-cells.mjs', import.meta.url),
    );
    execFile(process.execPath, [plugin, ...args], (error, out, err) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err }),
    );
  });

describeE2e(
  'backup controller: an inert copy in the next cell clockwise, promoted when a cell is Down',
  () => {
    const env = e2eEnv();
    const { provider, runnable } = cellAdder(env);
    const log = createLogger({ level: 'warn' });
    const cellSetName = `backup-${Date.now()}`;
    const namespace = `backup-${Date.now()}`;
    const OBJECTS = 1000;
    const names = Array.from({ length: OBJECTS }, (_, i) => `web-${i}`);
    const controlPlane = KubeClient.fromFile(env.controlPlane.kubeconfig);
    const cells = new Map(env.cells.map((cell) => [cell.id, KubeClient.fromFile(cell.kubeconfig)]));
    let federation: ScratchFederation | undefined;
    let controller: ControllerProcess | undefined;
    let routed: KubeClient | undefined;
    let added: CellEntry | undefined;
    let writer: ReturnType<typeof startWriter> | undefined;
    let rebalancer: ControllerProcess | undefined;
    /** What the failover test leaves: the cell that died, and what every object held when it ended. */
    let failedOver:
      { doomed: string; onDoomed: string[]; served: Map<string, KubeObject['metadata']> } | undefined;

    const everyObjectBackedUp = (live: readonly string[], table: RoutingTable, count = OBJECTS) =>
      everyObjectBackedUpIn(cells, { live, namespace, table, count });
    // Four workers: a lost cell's promotions then take seconds, long enough to show a write to one of its
    // keys succeeding before they end.
    const startBackup = (ids: readonly string[]) =>
      startBackupController(env, {
        args: ['--cellset', cellSetName, '--leader-elect', 'false', '--resync', '30s', '--workers', '4'],
        cells: [...ids],
        logFile: join(env.dir, `${cellSetName}-backup-controller.log`),
      });
    const startRebalancer = (ids: readonly string[]) =>
      startRebalanceController(env, {
        args: [
          ...['--cellset', cellSetName, '--leader-elect', 'false', '--delete-after', '2s'],
          ...['--mirror-resync', '2s'],
        ],
        cells: [...ids],
        logFile: join(env.dir, `${cellSetName}-rebalance-controller.log`),
      });
    const cellSetNow = async () =>
      (await readCellSet(env.controlPlane.kubeconfig, cellSetName)) as {
        spec: { cells: { id: string; state: string }[] };
        status?: { conditions?: { type: string; status: string; reason: string }[] };
      };

    afterAll(async () => {
      await writer?.stop().catch(() => undefined);
      await stopController(controller);
      await stopController(rebalancer);
      await stopScratchFederation(env, federation, { cellSetName, namespace });
      if (added) await provider.removeCell({ dir: env.dir, id: added.id, log });
      for (const client of [controlPlane, routed, ...cells.values()]) await client?.close();
    });

    runnable(
      `${OBJECTS} Deployments over 3 cells, a writer running, one cell killed and marked Down: every object readable, then writable, through the router; lost writes only inside the replication lag`,
      async () => {
        const [one, two] = env.cells.map((cell) => cell.id) as [string, string];
        // The cell that fails is one of the test's own: the environment's cells serve the suites after this.
        added = await provider.addCell({ dir: env.dir, controllerManager: false, log });
        const doomed = added.id;
        cells.set(doomed, KubeClient.fromFile(added.kubeconfig));
        const healthy = cellSetSpec({ [one]: 'Normal', [two]: 'Normal', [doomed]: 'Normal' });
        federation = await startScratchFederation(env, {
          cellSetName,
          spec: healthy,
          namespace,
          deployments: names,
          cells: [one, two, doomed],
        });
        routed = federation.routed;
        // A field one client owns by server-side apply, on every object: after the failover it still owns it.
        const applyLabel = (name: string, value: string) =>
          routed!.request('PATCH', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${name}`, {
            body: {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name, labels: { [APPLIED]: value } },
            },
            contentType: 'application/apply-patch+yaml',
            query: { fieldManager: 'e2e-applier' },
          });
        await forEachInParallel(names, 16, (name) => applyLabel(name, 'before'));
        controller = await startBackup([one, two, doomed]);
        const healthyTable = RoutingTable.fromCellSet(parseCellSetSpec(healthy));
        const backedUpAt = Date.now();
        await eventually(
          'every object to have its backup in the next cell clockwise',
          () => everyObjectBackedUp([one, two, doomed], healthyTable),
          90_000,
        );
        const initialBackupSeconds = (Date.now() - backedUpAt) / 1000;

        // The uid each object has for clients: a promoted object keeps it, as a moved one does.
        const uidsBefore = new Map(
          (
            await routed.request<KubeList>('GET', `${DEPLOYMENTS}/namespaces/${namespace}/deployments`, {
              accept: METADATA_LIST,
            })
          ).items.map((item) => [item.metadata.name, item.metadata.uid]),
        );
        expect(uidsBefore.size).toBe(OBJECTS);

        // kubectl cells prints an object as its backup holds it, read from its backup cell with the
        // operator's own context there: the field the applier owns is there.
        const printed = await cellsPlugin([
          'backup',
          `deployments/${names[0]}`,
          '-n',
          namespace,
          '--cellset',
          cellSetName,
          '--kubeconfig',
          writeOperatorKubeconfig(env, join(env.dir, `${cellSetName}-operator.kubeconfig`), [
            ...env.cells,
            added,
          ]),
        ]);
        // The plugin's own line says why when it fails (which cell, which context).
        expect({ code: printed.code, err: printed.err }).toEqual({ code: 0, err: '' });
        expect(JSON.parse(printed.out)).toMatchObject({
          kind: 'Deployment',
          metadata: { name: names[0], labels: { [APPLIED]: 'before' } },
        });

        // The writer runs across the failure; then the cell's apiserver and etcd die.
        writer = startWriter(routed, namespace, names, 4, { skipRefused: true });
        await sleep(3000);
        const onDoomed = names.filter(
          (name) => healthyTable.route(healthyTable.keyOf({ namespace, name })).oldCell === doomed,
        );
        expect(onDoomed.length).toBeGreaterThan(OBJECTS / 5);
        const local = LocalCells.open(env.dir);
        await local.stop(doomed, 'kube-apiserver', 0);
        await local.stop(doomed, 'etcd', 0);
        const killedAt = Date.now();
        const failed = cellSetSpec({ [one]: 'Normal', [two]: 'Normal', [doomed]: 'Down' });
        await updateCellSet(env.controlPlane.kubeconfig, cellSetName, failed);
        const downAt = Date.now();

        // A client writes one lost key from the moment the cell is Down: its 429 puts the key at the front of
        // the promotions, and the write succeeds while the bulk of them is still going on.
        const touched = onDoomed[onDoomed.length - 1]!;
        for (;;) {
          const written = await routed
            .request('PATCH', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${touched}`, {
              body: { metadata: { labels: { 'e2e.cellfed.io/first-write': 'yes' } } },
              contentType: 'application/merge-patch+json',
            })
            .then(
              () => true,
              (error: unknown) => {
                // Refused until promoted (429), or the router has not seen the Down cell yet (5xx).
                if (error instanceof ApiError && (error.statusCode === 429 || error.statusCode >= 500))
                  return false;
                throw error;
              },
            );
          if (written) break;
          expect(Date.now() - downAt).toBeLessThan(60_000);
          await sleep(100);
        }
        const firstWriteSeconds = (Date.now() - downAt) / 1000;
        const committed = new Set<string>();
        for (const id of [one, two])
          for (const [name, metadata] of await deploymentsIn(cells.get(id)!, namespace))
            if (metadata.annotations?.[PROMOTED_FROM_ANNOTATION] === undefined) committed.add(name);
        const promotedAtFirstWrite = onDoomed.filter((name) => committed.has(name)).length;
        expect(committed.has(touched)).toBe(true);
        expect(promotedAtFirstWrite).toBeLessThan(onDoomed.length);

        // Every object of the dead cell is readable through the router: from its backup, then promoted.
        let unreadable = [...onDoomed];
        await eventually(
          'every object of the dead cell to be readable through the router',
          async () => {
            const still: string[] = [];
            await forEachInParallel(unreadable, 16, async (name) => {
              await routed!
                .request('GET', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${name}`)
                .catch(() => still.push(name));
            });
            unreadable = still;
            return still.length === 0 ? true : undefined;
          },
          60_000,
        );
        const readableSeconds = (Date.now() - downAt) / 1000;
        // kubectl reads one of them too (from its backup or its promoted copy).
        const kubeconfig = join(env.dir, `${cellSetName}.kubeconfig`);
        const shown = await kubectl(kubeconfig, [
          '-n',
          namespace,
          'get',
          'deployment',
          onDoomed[0]!,
          '-o',
          'name',
        ]);
        expect(shown).toMatchObject({
          code: 0,
          out: expect.stringContaining(`deployment.apps/${onDoomed[0]}`),
        });

        // Writes succeed once each backup is promoted (429 until then, retried like a fenced write).
        const failedTable = RoutingTable.fromCellSet(parseCellSetSpec(failed));
        let unwritten = [...onDoomed];
        await eventually(
          'every object of the dead cell to be writable through the router',
          async () => {
            const still: string[] = [];
            await forEachInParallel(unwritten, 16, async (name) => {
              await routed!
                .request('PATCH', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${name}`, {
                  body: { metadata: { labels: { 'e2e.cellfed.io/restored': 'yes' } } },
                  contentType: 'application/merge-patch+json',
                })
                .catch(() => still.push(name));
            });
            unwritten = still;
            return still.length === 0 ? true : undefined;
          },
          90_000,
        );
        const writableSeconds = (Date.now() - downAt) / 1000;
        // A promoted object keeps its field managers: the applier changes its own field again, without
        // forcing, and no conflict with the controller that created the object in its new cell.
        await forEachInParallel(onDoomed, 16, (name) => applyLabel(name, 'after'));
        await sleep(1000);
        await writer.stop();

        // Each object exists once, in the cell the ring without the dead cell names.
        const served = new Map<string, KubeObject['metadata']>();
        for (const id of [one, two]) {
          for (const [name, metadata] of await deploymentsIn(cells.get(id)!, namespace)) {
            expect(served.has(name)).toBe(false);
            expect(failedTable.route(failedTable.keyOf({ namespace, name })).oldCell).toBe(id);
            served.set(name, metadata);
          }
        }
        expect(served.size).toBe(OBJECTS);

        // Through the router the list shows every object once, and never a backup.
        const listed = await routed.request<KubeList>(
          'GET',
          `${DEPLOYMENTS}/namespaces/${namespace}/deployments`,
          {
            accept: METADATA_LIST,
          },
        );
        expect(listed.items).toHaveLength(OBJECTS);
        expect(new Set(listed.items.map((item) => item.metadata.name)).size).toBe(OBJECTS);
        expect(
          listed.items.every(
            (item) => item.metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION] === undefined,
          ),
        ).toBe(true);
        expect(
          listed.items
            .filter((item) => item.metadata.uid !== uidsBefore.get(item.metadata.name))
            .map((item) => item.metadata.name),
        ).toEqual([]);

        // Lost writes: acknowledged, yet not in the object served now. Only the dead cell's objects lose any,
        // and only writes acknowledged shortly before it died (inside the replication lag: the RPO).
        const lost: { name: string; ageMs: number }[] = [];
        for (const [name, acks] of writer.acknowledged) {
          const seen = Number(served.get(name)?.annotations?.[SEQ] ?? 0);
          for (const ack of acks) if (ack.seq > seen) lost.push({ name, ageMs: killedAt - ack.at });
        }
        const rpoMs = Math.max(0, ...lost.map((write) => write.ageMs));
        log.warn(
          {
            objects: OBJECTS,
            onDoomed: onDoomed.length,
            initialBackupSeconds,
            writes: writer.writes(),
            refused: writer.refused(),
            lostWrites: lost.length,
            rpoMs,
            readableSeconds,
            firstWriteSeconds,
            promotedAtFirstWrite,
            writableSeconds,
          },
          'failover figures',
        );
        expect(lost.every((write) => onDoomed.includes(write.name))).toBe(true);
        expect(rpoMs).toBeLessThan(2000);
        expect([...writer.acknowledged.values()].flat().length).toBeGreaterThan(100);

        // And the promoted objects are backed up anew, in the cells the ring without the dead cell names.
        await eventually(
          'every object to be backed up again after the failover',
          () => everyObjectBackedUp([one, two], failedTable),
          60_000,
        );
        failedOver = { doomed, onDoomed, served };
      },
      420_000,
    );

    /** Where each Deployment of the namespace is, read from the cells directly; leftover `migrated` copies apart. */
    const placement = async (ids: readonly string[]) => {
      const where = new Map<string, { cells: string[]; metadata: KubeObject['metadata'] }>();
      for (const id of ids)
        for (const [name, metadata] of await deploymentsIn(cells.get(id)!, namespace))
          if (metadata.labels?.['cellfed.io/rebalance-status'] !== 'migrated')
            where.set(name, { cells: [...(where.get(name)?.cells ?? []), id], metadata });
      return where;
    };
    /** Every object in `expected` is once in the cell the ring names and holds the value expected; no other. */
    const expectPlaced = async (
      ids: readonly string[],
      table: RoutingTable,
      expected: ReadonlyMap<string, string>,
    ) =>
      eventually(
        'every object to be once, where the ring says, as expected',
        async () => {
          const where = await placement(ids);
          if (where.size !== expected.size) return undefined;
          for (const [name, seq] of expected) {
            const at = where.get(name);
            if (
              at?.cells.length !== 1 ||
              at.cells[0] !== table.route(table.keyOf({ namespace, name })).oldCell
            )
              return undefined;
            if ((at.metadata.annotations?.[SEQ] ?? '') !== seq) return undefined;
          }
          return true;
        },
        90_000,
      );
    const rejoin = async (doomed: string) => {
      const [one, two] = env.cells.map((cell) => cell.id) as [string, string];
      rebalancer ??= await startRebalancer([one, two, doomed]);
      await updateCellSet(
        env.controlPlane.kubeconfig,
        cellSetName,
        cellSetSpec({ [one]: 'Normal', [two]: 'Normal', [doomed]: 'Joining' }),
      );
      await eventually(
        `${doomed} to rejoin and turn Normal`,
        async () =>
          (await cellSetNow()).spec.cells.find((cell) => cell.id === doomed)?.state === 'Normal'
            ? true
            : undefined,
        180_000,
      );
      return RoutingTable.fromCellSet(
        parseCellSetSpec(cellSetSpec({ [one]: 'Normal', [two]: 'Normal', [doomed]: 'Normal' })),
      );
    };

    runnable(
      'a Down cell that comes back with its data is never trusted: its stale copies go, it rejoins and gets the current ones',
      async () => {
        if (!failedOver) throw new Error('needs the failover test before it');
        const { doomed, onDoomed, served } = failedOver;
        const [one, two] = env.cells.map((cell) => cell.id) as [string, string];
        // While it is away, one of its objects is deleted and one changed, through the router.
        const [gone, changed] = onDoomed as [string, string];
        await routed!.request('DELETE', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${gone}`);
        await routed!.request('PATCH', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${changed}`, {
          body: { metadata: { annotations: { [SEQ]: 'changed-while-away' } } },
          contentType: 'application/merge-patch+json',
        });
        const expected = new Map(
          names
            .filter((name) => name !== gone)
            .map((name) => [
              name,
              name === changed ? 'changed-while-away' : (served.get(name)?.annotations?.[SEQ] ?? ''),
            ]),
        );
        // It comes back with everything it had, and is still Down: nothing routes to it, and its copies go.
        const local = LocalCells.open(env.dir);
        await local.start(doomed, 'etcd');
        await local.start(doomed, 'kube-apiserver');
        await eventually(
          'the cell that came back to be emptied of its stale copies',
          async () =>
            (await deploymentsIn(cells.get(doomed)!, namespace).catch(() => undefined))?.size === 0
              ? true
              : undefined,
          60_000,
        );

        const table = await rejoin(doomed);
        await expectPlaced([one, two, doomed], table, expected);
        await expect(
          routed!.request('GET', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${gone}`),
        ).rejects.toMatchObject({ statusCode: 404 });
        // Its backup went with it, in every cell.
        await eventually('the deleted object to have no backup left', async () => {
          for (const client of cells.values())
            if ((await backupsIn(client)).has(`deployments.apps/${namespace}/${gone}`)) return undefined;
          return true;
        });
        const listed = await routed!.request<KubeList>(
          'GET',
          `${DEPLOYMENTS}/namespaces/${namespace}/deployments`,
          {
            accept: METADATA_LIST,
          },
        );
        expect(listed.items).toHaveLength(OBJECTS - 1);
        expect(
          names.filter(
            (name) => name !== gone && table.route(table.keyOf({ namespace, name })).oldCell === doomed,
          ).length,
        ).toBeGreaterThan(OBJECTS / 5);
        await eventually(
          'every object to be backed up in the full ring',
          () => everyObjectBackedUp([one, two, doomed], table, OBJECTS - 1),
          90_000,
        );
        failedOver = {
          ...failedOver,
          served: new Map(
            [...(await placement([one, two, doomed]))].map(([name, at]) => [name, at.metadata]),
          ),
        };
      },
      300_000,
    );

    /** What the tests before left: the cell that died, the environment's two, each object's last write. */
    const leftBefore = () => {
      if (!failedOver) throw new Error('needs the tests before it');
      const [one, two] = env.cells.map((cell) => cell.id) as [string, string];
      const expected = new Map(
        [...failedOver.served].map(([name, metadata]) => [name, metadata.annotations?.[SEQ] ?? '']),
      );
      return { doomed: failedOver.doomed, one, two, expected };
    };

    runnable(
      'disposable cells: a cell whose data is deleted is marked Down, an empty cell rebuilt under its id joins, and nothing is lost',
      async () => {
        const { doomed, one, two, expected } = leftBefore();
        // Its disk is gone.
        const local = LocalCells.open(env.dir);
        await local.wipe(doomed);
        const failed = cellSetSpec({ [one]: 'Normal', [two]: 'Normal', [doomed]: 'Down' });
        await updateCellSet(env.controlPlane.kubeconfig, cellSetName, failed);
        await expectPlaced([one, two], RoutingTable.fromCellSet(parseCellSetSpec(failed)), expected);

        // An empty apiserver comes back under the same id, address and certificates, and joins.
        await local.start(doomed, 'etcd');
        await local.start(doomed, 'kube-apiserver');
        // As an operator would: the cellfed-cell chart into the rebuilt cell, before it rejoins.
        await installCellRbac(added!.kubeconfig, join(process.env['CELLFED_TOOLS_BIN']!, 'helm'));
        expect((await deploymentsIn(cells.get(doomed)!, namespace).catch(() => new Map())).size).toBe(0);
        const table = await rejoin(doomed);
        await expectPlaced([one, two, doomed], table, expected);
        await eventually(
          'every object to be backed up in the full ring',
          () => everyObjectBackedUp([one, two, doomed], table, expected.size),
          90_000,
        );
        failedOver = {
          ...failedOver!,
          served: new Map(
            [...(await placement([one, two, doomed]))].map(([name, at]) => [name, at.metadata]),
          ),
        };
      },
      300_000,
    );

    runnable(
      'a cell that fails while another drains: its objects are read from their backups in the draining cell, promoted there, moved on, and the drain ends only then',
      async () => {
        const { doomed, one, two, expected } = leftBefore();
        // Neither controller runs while the cell dies: nothing is promoted or moved until the test says.
        await stopController(rebalancer);
        await stopController(controller);
        rebalancer = controller = undefined;
        await updateCellSet(
          env.controlPlane.kubeconfig,
          cellSetName,
          cellSetSpec({ [one]: 'Normal', [two]: 'Draining', [doomed]: 'Normal' }),
        );
        const local = LocalCells.open(env.dir);
        await local.stop(doomed, 'kube-apiserver', 0);
        await local.stop(doomed, 'etcd', 0);
        const failed = cellSetSpec({ [one]: 'Normal', [two]: 'Draining', [doomed]: 'Down' });
        await updateCellSet(env.controlPlane.kubeconfig, cellSetName, failed);
        const table = RoutingTable.fromCellSet(parseCellSetSpec(failed));
        // The dead cell's keys that the drain sends on: their backups are in the draining cell, their old cell.
        const movingOn = [...expected.keys()].filter((name) => {
          const key = table.keyOf({ namespace, name });
          const { oldCell, newCell } = table.route(key);
          return table.failedOverFrom(key) === doomed && oldCell === two && newCell === one;
        });
        expect(movingOn.length).toBeGreaterThan(OBJECTS / 20);

        const everyReadable = async (what: string) =>
          eventually(
            what,
            async () => {
              const unread: string[] = [];
              await forEachInParallel([...expected.keys()], 16, (name) =>
                routed!
                  .request('GET', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${name}`)
                  .catch(() => unread.push(name)),
              );
              return unread.length === 0 ? true : undefined;
            },
            60_000,
          );
        // Read from their backups, though the ring names a cell that holds neither them nor a backup.
        await everyReadable('every object to be readable from its backup, the drain not begun');
        const write = await routed!
          .request('PATCH', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${movingOn[0]}`, {
            body: { metadata: { labels: { 'e2e.cellfed.io/written': 'yes' } } },
            contentType: 'application/merge-patch+json',
          })
          .then(
            () => 200,
            (error: unknown) => (error instanceof ApiError ? error.statusCode : 0),
          );
        expect(write).toBe(429);
        expect((await deploymentsIn(cells.get(one)!, namespace)).has(movingOn[0]!)).toBe(false);

        // The drain moves all it can, and waits for the promotions rather than take the draining cell away
        // with the backups in it.
        rebalancer = await startRebalancer([one, two]);
        await eventually(
          'the drain to wait for the dead cell’s promotions',
          async () =>
            (await cellSetNow()).status?.conditions?.some(
              (condition) => condition.type === 'Blocked' && condition.reason === 'PromotionsPending',
            )
              ? true
              : undefined,
          120_000,
        );
        expect((await cellSetNow()).spec.cells.map((cell) => cell.id)).toContain(two);
        await everyReadable('every object to be readable while the drain waits');

        // Promoted in the draining cell, then moved on: the drain ends with every object in the one cell left.
        controller = await startBackup([one, two]);
        await eventually(
          `${two} to be drained and leave the CellSet`,
          async () => ((await cellSetNow()).spec.cells.some((cell) => cell.id === two) ? undefined : true),
          180_000,
        );
        const drained = RoutingTable.fromCellSet(
          parseCellSetSpec(cellSetSpec({ [one]: 'Normal', [doomed]: 'Down' })),
        );
        await expectPlaced([one, two], drained, expected);
        const listed = await routed!.request<KubeList>(
          'GET',
          `${DEPLOYMENTS}/namespaces/${namespace}/deployments`,
          { accept: METADATA_LIST },
        );
        expect(listed.items).toHaveLength(expected.size);
      },
      420_000,
    );
  },
);
