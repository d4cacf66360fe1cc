// `npx nx run backup-controller:bench`: writes bench/results/backup.json.
// N ConfigMaps (10k unless CELLFED_BENCH_OBJECTS) over 3 real cells, each where the ring puts it, the router
// and the backup controller in front of them. Side by side in one run, in alternating rounds:
//  - cellfed: objects patched straight in their cell at 100 writes/s; lag = the backup carrying the write's
//    resourceVersion seen in the backup cell's watch − the write acknowledged;
//  - baseline: a raw watch→apply loop in this process (one watch of the same ConfigMaps in one cell, each
//    event applied at once as a CellBackup of the same shape into another cell) under the same load, measured
//    the same way; its ConfigMaps live in a cell system namespace, which the backup controller ignores.
// Then a cell's etcd and apiserver are killed and it is marked Down: failoverReadsS (Down → a sample of 300
// objects spread over that cell's readable through the router, from their backups); firstWriteP50S/P99S
// (from Down, one client per key writes each of 100 other lost keys through the router, honouring the 429's
// Retry-After, until its write succeeds: a key a client waits on is promoted first); and failoverWritesS
// (Down → every one promoted, as the live cells' watches show; each is then read and written once through
// the router). Its floor, measured just before in the same run: createLoopS, a plain loop creating as many
// objects in the live cells at the controller's concurrency (failoverWritesVsCreateLoopRatio).
// Before the lag rounds, what a backup write costs a cell: the apiserver + etcd CPU of one cell per CellBackup
// write as the controller makes it (created; replaced, as a change does) against a ConfigMap create of the
// same object, in alternating rounds; beside it, the same by server-side apply, and the earlier form (the
// object as a subtree in spec.object) applied as the previous version did.
// Figures and goals: backupWriteCpuOverCreate ≤ 1.3, lagP50Ms ≤ 50, lagP99Ms ≤ 500, lagVsRawLoopRatio (p99 / the raw loop's p99) ≤ 2,
// failoverReadsS ≤ 2, firstWriteP99OverReads (firstWriteP99S / failoverReadsS) ≤ 2, failoverWritesS ≤ 5.
// The CPU the controller and the live apiservers used during the failover is recorded beside it, to tell
// which side it waited on.
import {
  CELL_BACKUP_NAMESPACE,
  PROMOTED_FROM_ANNOTATION,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  parseCellSetSpec,
} from '@cellfed/api';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  BenchEnv,
  call,
  cpuMicros,
  forEachIndex,
  percentile,
  progress,
  round,
  send,
  writeResult,
  type Target,
} from '@cellfed/bench-kit';
import { KubeClient } from '@cellfed/controller-kit';
import { RoutingTable } from '@cellfed/hashing';
import { APPLY_PATCH, MERGE_PATCH, type KubeObject, cellBackupOf } from '@cellfed/federation';

const OBJECTS = Number(process.env['CELLFED_BENCH_OBJECTS'] ?? 10_000);
const WRITES_PER_SECOND = 100;
const ROUND_SECONDS = Number(process.env['CELLFED_BENCH_ROUND_SECONDS'] ?? 10);
const ROUNDS = Number(process.env['CELLFED_BENCH_ROUNDS'] ?? 3);
const NAMESPACE = 'bench';
/** The controller's workers; also the plain create loop's concurrency. */
const WORKERS = 16;
// A cell's system namespace, which the backup controller leaves alone: only the raw loop copies these.
const RAW_NAMESPACE = 'kube-public';
const CELLSET = '/apis/cells.cellfed.io/v1alpha1/cellsets/default';
const BACKUPS = `/apis/cells.cellfed.io/v1alpha1/namespaces/${CELL_BACKUP_NAMESPACE}/cellbackups`;
const configMaps = (namespace: string) => `/api/v1/namespaces/${namespace}/configmaps`;
const CONFIG_MAPS = { group: '', version: 'v1', resource: 'configmaps' };

/** Objects per arm and round of the CPU comparison. */
const CPU_OBJECTS = Number(process.env['CELLFED_BENCH_CPU_OBJECTS'] ?? 500);
const CPU_ROUNDS = 2;

const configMap = (name: string, i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels: { app: `app-${i % 500}` } },
  data: { 'settings.json': 'x'.repeat(256) },
});

/** Resolves the time each (object, resourceVersion) is first seen in a backup, from watches of backups. */
class BackupSightings {
  private readonly seen = new Map<string, number>();
  private readonly waiters = new Map<string, (at: number) => void>();

  record(name: string, version: string, at: number): void {
    const key = `${name}@${version}`;
    if (this.seen.has(key)) return;
    this.seen.set(key, at);
    this.waiters.get(key)?.(at);
    this.waiters.delete(key);
  }

  /** When the backup of `name` at `version` was seen; undefined after `timeoutMs`. */
  async when(name: string, version: string, timeoutMs = 30_000): Promise<number | undefined> {
    const key = `${name}@${version}`;
    const at = this.seen.get(key);
    if (at !== undefined) return at;
    return Promise.race([
      new Promise<number>((resolve) => this.waiters.set(key, resolve)),
      sleep(timeoutMs).then(() => undefined),
    ]);
  }
}

/** Watches the CellBackups of one cell for as long as `signal` lets it, recording every version seen. */
async function watchBackups(
  client: KubeClient,
  sightings: BackupSightings,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const list = await client.request<{ metadata: { resourceVersion: string } }>('GET', BACKUPS, {
        query: { limit: 1 },
        signal,
      });
      const events = await client.watch(BACKUPS, {
        query: { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
        signal,
      });
      for await (const event of events) {
        const object = event.object as KubeObject & { spec?: { source?: { name?: string } } };
        const version = object.metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION];
        const name = object.spec?.source?.name;
        if (event.type !== 'DELETED' && version && name) sightings.record(name, version, performance.now());
      }
    } catch {
      if (!signal.aborted) await sleep(200);
    }
  }
}

/**
 * The baseline: one watch of the raw namespace's ConfigMaps in `from`, each event applied at once as a
 * CellBackup into `to` — what the controller does, without its caches, queue, routing or bookkeeping.
 */
async function rawLoop(from: KubeClient, to: KubeClient, fromId: string, toId: string, signal: AbortSignal) {
  const path = configMaps(RAW_NAMESPACE);
  while (!signal.aborted) {
    try {
      const list = await from.request<{ metadata: { resourceVersion: string } }>('GET', path, {
        query: { limit: 1 },
        signal,
      });
      const events = await from.watch(path, {
        query: { resourceVersion: list.metadata.resourceVersion },
        signal,
      });
      for await (const event of events) {
        if (event.type === 'BOOKMARK' || event.type === 'DELETED') continue;
        const object = event.object as KubeObject;
        const ref = { resource: CONFIG_MAPS, namespace: RAW_NAMESPACE, name: object.metadata.name! };
        const backup = cellBackupOf(object, ref, { primaryCell: fromId, backupCell: toId });
        backup.metadata.name = `raw-${backup.metadata.name}`;
        void to
          .request('PATCH', `${BACKUPS}/${backup.metadata.name}`, {
            query: { fieldManager: 'raw-loop', force: true },
            body: backup,
            contentType: APPLY_PATCH,
            signal,
          })
          .catch(() => undefined);
      }
    } catch {
      if (!signal.aborted) await sleep(200);
    }
  }
}

/**
 * The cell's apiserver + etcd CPU (µs) per write, for ConfigMap creates in `target` and CellBackups of the
 * same objects: created and replaced as the controller writes them (POST, then PUT on the version it
 * knows); the same by server-side apply, for reference; and the earlier form (the object as a subtree in
 * spec.object) by server-side apply, as the previous version wrote it. The objects are in a cell system
 * namespace, which the backup controller ignores.
 */
async function backupWriteCpu(target: Target, daemons: readonly number[], cells: [string, string]) {
  const perWrite = {
    configMapCreate: 0,
    backupCreate: 0,
    backupWrite: 0,
    applyCreate: 0,
    applyWrite: 0,
    earlierFormApplyCreate: 0,
    earlierFormApplyWrite: 0,
  };
  const timed = async (arm: keyof typeof perWrite, write: (i: number) => Promise<unknown>) => {
    const before = cpuMicros(...daemons);
    await forEachIndex(arm, CPU_OBJECTS, WORKERS, write);
    perWrite[arm] += (cpuMicros(...daemons) - before) / (CPU_OBJECTS * CPU_ROUNDS);
  };
  const backupOf = (object: KubeObject, prefix: string, earlierForm = false) => {
    const ref = { resource: CONFIG_MAPS, namespace: RAW_NAMESPACE, name: object.metadata.name! };
    const backup = cellBackupOf(object, ref, { primaryCell: cells[0], backupCell: cells[1] });
    return {
      ...backup,
      metadata: { ...backup.metadata, name: `${prefix}-${backup.metadata.name}` },
      spec: earlierForm ? { source: backup.spec.source, object } : backup.spec,
    };
  };
  const apply = (body: ReturnType<typeof backupOf>) =>
    call(
      target,
      'PATCH',
      `${BACKUPS}/${body.metadata.name}?fieldManager=bench&force=true`,
      body,
      APPLY_PATCH,
    );
  const changed = (object: KubeObject) => ({
    ...object,
    metadata: { ...object.metadata, annotations: { seq: '1' } },
  });
  for (let round = 0; round < CPU_ROUNDS; round++) {
    const created: KubeObject[] = [];
    const versions: string[] = [];
    await timed('configMapCreate', async (i) => {
      const text = await call(target, 'POST', configMaps(RAW_NAMESPACE), configMap(`cpu-${round}-${i}`, i));
      created[i] = JSON.parse(text) as KubeObject;
    });
    await timed('backupCreate', async (i) => {
      const text = await call(target, 'POST', BACKUPS, backupOf(created[i]!, 'cpu'));
      versions[i] = (JSON.parse(text) as KubeObject).metadata.resourceVersion!;
    });
    await timed('backupWrite', (i) => {
      const backup = backupOf(changed(created[i]!), 'cpu');
      const body = { ...backup, metadata: { ...backup.metadata, resourceVersion: versions[i] } };
      return call(target, 'PUT', `${BACKUPS}/${backup.metadata.name}`, body);
    });
    await timed('applyCreate', (i) => apply(backupOf(created[i]!, 'cpu-apply')));
    await timed('applyWrite', (i) => apply(backupOf(changed(created[i]!), 'cpu-apply')));
    await timed('earlierFormApplyCreate', (i) => apply(backupOf(created[i]!, 'cpu-v0', true)));
    await timed('earlierFormApplyWrite', (i) => apply(backupOf(changed(created[i]!), 'cpu-v0', true)));
  }
  return Object.fromEntries(
    Object.entries(perWrite).map(([arm, micros]) => [arm, round(micros, 0)]),
  ) as typeof perWrite;
}

/** Patches `names` in `client` at WRITES_PER_SECOND for ROUND_SECONDS; the lag of each write's backup. */
async function measureLag(
  client: KubeClient,
  namespace: string,
  names: readonly string[],
  sightings: BackupSightings,
) {
  const lags: number[] = [];
  let missing = 0;
  const pending: Promise<void>[] = [];
  const total = WRITES_PER_SECOND * ROUND_SECONDS;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / WRITES_PER_SECOND;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const name = names[i % names.length]!;
    pending.push(
      (async () => {
        const written = await client.request<KubeObject>('PATCH', `${configMaps(namespace)}/${name}`, {
          body: { metadata: { annotations: { 'bench.cellfed.io/seq': String(i) } } },
          contentType: MERGE_PATCH,
        });
        const acknowledged = performance.now();
        const at = await sightings.when(name, written.metadata.resourceVersion!);
        if (at === undefined) missing++;
        else lags.push(Math.max(0, at - acknowledged));
      })(),
    );
  }
  await Promise.all(pending);
  return { lags, missing };
}

/**
 * Resolves once each of `names` has been seen in `namespace` by one of the clients' watches without the mark
 * of a promotion not committed yet: from then on the router lets writes to it through.
 */
async function allCommitted(
  clients: readonly KubeClient[],
  namespace: string,
  names: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  const waiting = new Set(names);
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const stop = new AbortController();
  const watchSignal = AbortSignal.any([signal, stop.signal]);
  for (const client of clients) {
    const list = await client.request<{ metadata: { resourceVersion: string } }>(
      'GET',
      configMaps(namespace),
      { query: { limit: 1 } },
    );
    void (async () => {
      const events = await client.watch(configMaps(namespace), {
        query: { resourceVersion: list.metadata.resourceVersion },
        signal: watchSignal,
      });
      for await (const event of events) {
        const { metadata } = event.object as KubeObject;
        if (event.type === 'DELETED' || metadata.annotations?.[PROMOTED_FROM_ANNOTATION] !== undefined)
          continue;
        if (waiting.delete(metadata.name!) && waiting.size === 0) done();
      }
    })().catch(() => undefined);
  }
  await finished;
  stop.abort();
}

/**
 * Writes `path` through the router until the write succeeds, as a client does: after a 429 it waits what the
 * Retry-After says, after anything else (the router has not seen the Down cell yet) 100 ms. Resolves when
 * the write succeeded.
 */
async function writeUntilAccepted(routed: Target, path: string): Promise<void> {
  const patch = { metadata: { labels: { 'bench.cellfed.io/first-write': 'yes' } } };
  for (;;) {
    const answer = await send(routed, 'PATCH', path, patch, MERGE_PATCH).catch(() => undefined);
    if (answer && answer.status < 300) return;
    await sleep(answer?.status === 429 ? (answer.retryAfterSeconds ?? 1) * 1000 : 100);
  }
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50), 1),
    p99: round(percentile(sorted, 99), 1),
  };
};

const env = BenchEnv.up('backup-bench', 3);
const abort = new AbortController();
try {
  const ids = env.env.cells.map((cell) => cell.id) as [string, string, string];
  const cellUrl = (id: string) => env.env.cells.find((cell) => cell.id === id)!.url;
  const clients = new Map(
    ids.map((id) => [id, KubeClient.fromFile(env.env.cells.find((c) => c.id === id)!.kubeconfig)]),
  );
  const controlPlane: Target = { base: env.env.controlPlane.url, agent: env.agent('control-plane') };
  const spec = parseCellSetSpec(
    (JSON.parse(await call(controlPlane, 'GET', CELLSET)) as { spec: unknown }).spec,
  );
  const table = RoutingTable.fromCellSet(spec);
  const names = Array.from({ length: OBJECTS }, (_, i) => `cm-${i}`);
  const cellOf = (name: string) => table.route(table.keyOf({ namespace: NAMESPACE, name })).oldCell;
  const byCell = (id: string) => names.filter((name) => cellOf(name) === id);

  // The objects, each straight into the cell the ring puts it in (the router would put it there too).
  for (const id of ids) {
    const target: Target = { base: cellUrl(id), agent: env.agent(id) };
    for (const namespace of [NAMESPACE, RAW_NAMESPACE])
      await call(target, 'POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace },
      });
  }
  await call(controlPlane, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NAMESPACE },
  });
  progress(`creating ${OBJECTS} ConfigMaps in the cells the ring names`);
  const targets = new Map(ids.map((id) => [id, { base: cellUrl(id), agent: env.agent(id) } as Target]));
  await forEachIndex('created', OBJECTS, 32, (i) =>
    call(targets.get(cellOf(names[i]!))!, 'POST', configMaps(NAMESPACE), configMap(names[i]!, i)),
  );
  const [one, two, three] = ids;
  const rawNames = Array.from({ length: 500 }, (_, i) => `raw-${i}`);
  await forEachIndex('raw objects', rawNames.length, 32, (i) =>
    call(targets.get(one)!, 'POST', configMaps(RAW_NAMESPACE), configMap(rawNames[i]!, i)),
  );

  const router = await env.startRouter();
  const routed: Target = { base: router.url, agent: env.agent('control-plane') };
  const backupStarted = performance.now();
  const controller = await env.startController('backup-controller', ['--workers', String(WORKERS)]);
  // Apiservers and etcds on CPU 0; the router, the controller and this process (the load, the raw loop) on CPU 1.
  const pinning = env.pinForComparison([router.child, controller.child]);
  progress(`pinning: ${JSON.stringify(pinning)}`);
  const sightings = new BackupSightings();
  for (const client of clients.values()) void watchBackups(client, sightings, abort.signal);
  // Every object backed up before anything is measured.
  const backupCount = async (client: KubeClient) => {
    const list = await client
      .request<{ metadata: { remainingItemCount?: number }; items?: unknown[] }>('GET', BACKUPS, {
        query: { limit: 1 },
      })
      .catch(() => ({ metadata: { remainingItemCount: 0 }, items: [] }));
    return (list.items?.length ?? 0) + (list.metadata.remainingItemCount ?? 0);
  };
  for (;;) {
    let total = 0;
    for (const client of clients.values()) total += await backupCount(client);
    if (total >= OBJECTS) break;
    await sleep(500);
  }
  const initialBackupSeconds = (performance.now() - backupStarted) / 1000;
  progress(`every object backed up in ${round(initialBackupSeconds, 1)} s`);

  const cpuPerWrite = await backupWriteCpu(targets.get(two)!, env.daemonPids(two), [one, two]);
  progress(`cell CPU µs per write: ${JSON.stringify(cpuPerWrite)}`);

  // Lag: the same load on the controller and on the raw loop, in alternating rounds.
  const lagObjects = byCell(one).slice(0, 500);
  const cellfedLags: number[] = [];
  const rawLags: number[] = [];
  const missing = { cellfed: 0, raw: 0 };
  for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
    const cellfed = await measureLag(clients.get(one)!, NAMESPACE, lagObjects, sightings);
    cellfedLags.push(...cellfed.lags);
    missing.cellfed += cellfed.missing;
    progress(`round ${roundIndex + 1} cellfed: ${JSON.stringify(stats(cellfed.lags))}`);

    const rawAbort = new AbortController();
    void rawLoop(
      clients.get(one)!,
      clients.get(two)!,
      one,
      two,
      AbortSignal.any([abort.signal, rawAbort.signal]),
    );
    await sleep(500);
    const raw = await measureLag(clients.get(one)!, RAW_NAMESPACE, rawNames, sightings);
    rawAbort.abort();
    rawLags.push(...raw.lags);
    missing.raw += raw.missing;
    progress(`round ${roundIndex + 1} raw loop: ${JSON.stringify(stats(raw.lags))}`);
    await sleep(2000);
  }

  // Failover: the third cell is lost and marked Down.
  const lost = byCell(three);
  const afterDown = RoutingTable.fromCellSet(
    parseCellSetSpec({
      ...spec,
      cells: spec.cells.map((cell) => ({ ...cell, state: cell.id === three ? 'Down' : cell.state })),
    }),
  );
  const servingCellOf = (name: string) =>
    afterDown.route(afterDown.keyOf({ namespace: NAMESPACE, name })).oldCell;
  // The floor: a plain loop creating as many objects in the cells that take the lost keys, at the
  // controller's concurrency (its workers), while all is quiet. Its objects go to a cell system namespace,
  // which the backup controller ignores.
  const createLoopStarted = performance.now();
  await forEachIndex('create loop', lost.length, WORKERS, (i) =>
    call(
      targets.get(servingCellOf(lost[i]!))!,
      'POST',
      configMaps(RAW_NAMESPACE),
      configMap(`twin-${lost[i]!}`, i),
    ),
  );
  const createLoopS = (performance.now() - createLoopStarted) / 1000;
  progress(`the plain loop created ${lost.length} objects in ${round(createLoopS, 2)} s`);
  await sleep(2000);
  // Every lost object promoted is when the live cells' watches have shown each one committed (created, then
  // its field managers written back). Watching costs the apiservers one event per write; listing them again
  // and again would cost far more than the failover.
  const promotedSeen = allCommitted(
    [one, two].map((id) => clients.get(id)!),
    NAMESPACE,
    lost,
    abort.signal,
  );
  // Which side the failover waits on: the CPU the controller and the live apiservers and etcds use in it.
  const liveDaemons = [one, two].flatMap((id) => env.daemonPids(id));
  const failoverCpu = () => ({
    controller: cpuMicros(controller.child.pid!),
    apiserversAndEtcds: cpuMicros(...liveDaemons),
  });
  await sleep(500);
  env.killCell(three);
  const cpuAtDown = failoverCpu();
  await call(
    controlPlane,
    'PATCH',
    CELLSET,
    {
      spec: {
        cells: spec.cells.map((cell) => ({ ...cell, state: cell.id === three ? 'Down' : cell.state })),
      },
    },
    MERGE_PATCH,
  );
  const downAt = performance.now();
  // First writes: one client per key, each writing from Down until its write succeeds, on keys spread over
  // the lost cell's (a prime stride) and other than the read sample's.
  const writeSample = Array.from(
    new Set(Array.from({ length: 100 }, (_, i) => lost[(i * 7919 + 13) % lost.length]!)),
  );
  const firstWrites = Promise.all(
    writeSample.map(async (name) => {
      await writeUntilAccepted(routed, `${configMaps(NAMESPACE)}/${name}`);
      return (performance.now() - downAt) / 1000;
    }),
  );
  // Reads: a sample spread over the lost cell's objects, each tried every 100 ms until it answers, gives
  // when reads came back (reading all of them one by one through the router takes seconds by itself).
  const sample = lost.filter((_, i) => i % Math.max(1, Math.floor(lost.length / 300)) === 0);
  await forEachIndex('sample read', sample.length, 32, async (i) => {
    for (;;) {
      try {
        return await call(routed, 'GET', `${configMaps(NAMESPACE)}/${sample[i]!}`);
      } catch {
        await sleep(100);
      }
    }
  });
  const failoverReadsS = (performance.now() - downAt) / 1000;
  progress(
    `a sample of ${sample.length} objects of ${three} readable through the router ${round(failoverReadsS, 2)} s after Down`,
  );
  const firstWriteS = (await firstWrites).sort((a, b) => a - b);
  progress(
    `${writeSample.length} clients each wrote a lost key at last ${round(percentile(firstWriteS, 50), 2)} s (p50), ${round(percentile(firstWriteS, 99), 2)} s (p99) after Down`,
  );
  // Writes: every object promoted (the live cells hold all N again) is when every one is writable.
  await promotedSeen;
  const failoverWritesS = (performance.now() - downAt) / 1000;
  const cpuAtPromoted = failoverCpu();
  const failoverCpuS = {
    controller: round((cpuAtPromoted.controller - cpuAtDown.controller) / 1e6, 2),
    liveApiserversAndEtcds: round((cpuAtPromoted.apiserversAndEtcds - cpuAtDown.apiserversAndEtcds) / 1e6, 2),
  };
  progress(
    `every object of ${three} promoted ${round(failoverWritesS, 2)} s after Down; CPU s: ${JSON.stringify(failoverCpuS)}`,
  );
  // Then every one of them, read and written through the router, answers at the first try.
  const firstTry = { read: 0, written: 0 };
  await forEachIndex('verify', lost.length, 32, async (i) => {
    const path = `${configMaps(NAMESPACE)}/${lost[i]!}`;
    if (
      await call(routed, 'GET', path).then(
        () => true,
        () => false,
      )
    )
      firstTry.read++;
    const patch = { metadata: { labels: { restored: 'yes' } } };
    if (
      await call(routed, 'PATCH', path, patch, MERGE_PATCH).then(
        () => true,
        () => false,
      )
    )
      firstTry.written++;
  });
  progress(
    `then through the router at the first try: ${firstTry.read} read, ${firstTry.written} written of ${lost.length}`,
  );

  const cellfed = stats(cellfedLags);
  const raw = stats(rawLags);
  const figures = {
    backupWriteCpuOverCreate: round(cpuPerWrite.backupWrite / cpuPerWrite.configMapCreate, 2),
    backupCreateCpuOverCreate: round(cpuPerWrite.backupCreate / cpuPerWrite.configMapCreate, 2),
    earlierFormWriteCpuOverCreate: round(cpuPerWrite.earlierFormApplyWrite / cpuPerWrite.configMapCreate, 2),
    lagP50Ms: cellfed.p50,
    lagP99Ms: cellfed.p99,
    rawLoopLagP50Ms: raw.p50,
    rawLoopLagP99Ms: raw.p99,
    lagVsRawLoopRatio: round(cellfed.p99 / Math.max(raw.p99, 0.1), 2),
    failoverReadsS: round(failoverReadsS, 2),
    firstWriteP50S: round(percentile(firstWriteS, 50), 2),
    firstWriteP99S: round(percentile(firstWriteS, 99), 2),
    firstWriteP99OverReads: round(percentile(firstWriteS, 99) / failoverReadsS, 2),
    failoverWritesS: round(failoverWritesS, 2),
    createLoopS: round(createLoopS, 2),
    failoverWritesVsCreateLoopRatio: round(failoverWritesS / createLoopS, 2),
  };
  const goals = {
    backupWriteCpuOverCreate: 1.3,
    lagP50Ms: 50,
    lagP99Ms: 500,
    lagVsRawLoopRatio: 2,
    failoverReadsS: 2,
    firstWriteP99OverReads: 2,
    failoverWritesS: 5,
  };
  // createLoopS is the floor the ratio is taken against, not a goal.
  writeResult(
    'backup',
    {
      benchmark:
        'backup-controller: replication lag at 100 writes/s beside a raw watch→apply loop; failover of a lost cell',
      date: new Date().toISOString(),
      machine: {
        node: process.version,
        cpus: cpus().length,
        model: cpus()[0]?.model.split(' ').slice(0, 2).join(' '),
      },
      pinning,
      objects: OBJECTS,
      writesPerSecond: WRITES_PER_SECOND,
      rounds: ROUNDS,
      roundSeconds: ROUND_SECONDS,
      figures,
      goals,
      met: Object.fromEntries(
        Object.entries(goals).map(([name, goal]) => [name, figures[name as keyof typeof figures] <= goal]),
      ),
      measured: {
        initialBackupSeconds: round(initialBackupSeconds, 1),
        // The backup cell's apiserver + etcd CPU per write, µs (CPU_OBJECTS × CPU_ROUNDS of each).
        cellCpuMicrosPerWrite: cpuPerWrite,
        writes: { cellfed: cellfed.count, raw: raw.count },
        missingBackups: missing,
        lostCell: three,
        lostCellObjects: lost.length,
        readSample: sample.length,
        firstWriteSample: writeSample.length,
        answeredAtFirstTryAfterPromotion: firstTry,
        // CPU seconds used from Down to every object promoted, beside failoverWritesS (the wall time).
        failoverCpuS,
      },
    },
    figures,
  );
} finally {
  abort.abort();
  await env.down();
}
