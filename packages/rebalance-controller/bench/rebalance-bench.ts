// `npx nx run rebalance-controller:bench`: writes bench/results/rebalance.json.
// N ConfigMaps (10k unless CELLFED_BENCH_OBJECTS) in 3 real cells, each where the ring puts it; a 4th cell
// joins. Side by side in one run, pinned (bench-kit's PINNING: apiservers and etcds on CPU 0, the
// controller and this load generator on CPU 1):
//  - baseline: the migration protocol itself done by a plain loop — fence label on the read version, create
//    in the new cell, `migrated` label on the fenced version — at the controller's window as concurrency, on
//    twins of the objects the 4th cell takes over, in a namespace of their own;
//  - cellfed: the rebalance controller moves them (fence, copy, status, migrated label, commit), from the
//    CellSet change to the 4th cell turning Normal (the gate — mirror, routers — included), its fence window
//    adapting to --fence-target (200 ms unless CELLFED_BENCH_FENCE_TARGET), sampled from its /metrics;
//  - then the plain loop again, at the controller's mean adapted window as concurrency: objects/s and
//    fences of the protocol at about the same number of moves at once.
// Figures: fenceP50Ms / fenceP99Ms (migrated-at − fenced-at on each old copy; goals ≤ 100 / ≤ 200),
// objectsPerSecond (≥ 300), vsProtocolLoopRatio (migration time / baseline time, ≤ 1.3), movedOverOptimal
// (objects moved / the fewest any placement must move, ≤ 1.05). Beside them: the loop's own fence windows,
// and each arm's CPU per move (every cell's apiserver and etcd; the mover), which says what the time went on. A move
// by the controller is four writes to the loop's three (the commit: the copy's `copied-from` mark removed
// and its field managers restored), so with the apiservers' CPU the limit the ratio cannot go below ~1.33.
import { parseCellSetSpec, FENCED_AT_ANNOTATION, MIGRATED_AT_ANNOTATION } from '@cellfed/api';
import { cpus } from 'node:os';

import {
  BenchEnv,
  call,
  cpuMicros,
  forEachIndex,
  percentile,
  progress,
  round,
  writeResult,
  type Target,
} from '@cellfed/bench-kit';
import {
  HashRing,
  MIGRATED,
  MIGRATING,
  REBALANCE_STATUS_LABEL,
  RoutingTable,
  planMigration,
} from '@cellfed/hashing';
import { FENCE_POLICY_NAME, MERGE_PATCH } from '@cellfed/federation';

const OBJECTS = Number(process.env['CELLFED_BENCH_OBJECTS'] ?? 10_000);
const WINDOW = Number(process.env['CELLFED_BENCH_WINDOW'] ?? 32);
const FENCE_TARGET = process.env['CELLFED_BENCH_FENCE_TARGET'] ?? '200ms';
const NAMESPACE = 'bench';
const BASELINE_NAMESPACE = 'bench-baseline';
const collection = (namespace: string) => `/api/v1/namespaces/${namespace}/configmaps`;
const CELLSET = '/apis/cells.cellfed.io/v1alpha1/cellsets/default';

const configMap = (name: string, i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    labels: { app: `app-${i % 500}`, tier: 'backend' },
    annotations: { 'example.com/owner': `team-${i % 40}` },
  },
  data: { 'settings.json': 'x'.repeat(256) },
});

interface ListItem {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

const env = BenchEnv.up('rebalance-bench', 4);
try {
  let pinning = env.pinForComparison([]);
  progress(`pinning: ${JSON.stringify(pinning)}`);
  const ids = env.env.cells.map((cell) => cell.id);
  const [one, two, three, four] = ids as [string, string, string, string];
  const target = (id: string): Target => ({
    base: env.env.cells.find((cell) => cell.id === id)?.url ?? env.env.controlPlane.url,
    agent: env.agent(id),
  });
  const controlPlane = target('control-plane');
  const cells = new Map(ids.map((id) => [id, target(id)]));
  /** The fence window (migrated-at − fenced-at) of every old copy labelled migrated in `namespace`, sorted. */
  const fenceWindows = async (namespace: string): Promise<number[]> => {
    const windows: number[] = [];
    for (const id of [one, two, three]) {
      const list = JSON.parse(
        await call(
          cells.get(id)!,
          'GET',
          `${collection(namespace)}?labelSelector=${encodeURIComponent(`${REBALANCE_STATUS_LABEL}=${MIGRATED}`)}`,
        ),
      ) as { items: ListItem[] };
      for (const item of list.items) {
        const annotations = item.metadata.annotations ?? {};
        windows.push(
          Date.parse(annotations[MIGRATED_AT_ANNOTATION] ?? '') -
            Date.parse(annotations[FENCED_AT_ANNOTATION] ?? ''),
        );
      }
    }
    return windows.sort((a, b) => a - b);
  };
  const secretRefs = JSON.parse(await call(controlPlane, 'GET', CELLSET)) as {
    spec: { cells: { id: string; kubeconfigSecretRef: { name: string } }[] };
  };
  const refOf = (id: string) => secretRefs.spec.cells.find((cell) => cell.id === id)!.kubeconfigSecretRef;
  const withStates = (states: Record<string, string>) =>
    Object.entries(states).map(([id, state]) => ({ id, state, kubeconfigSecretRef: refOf(id) }));
  const setCells = (states: Record<string, string>) =>
    call(controlPlane, 'PATCH', CELLSET, { spec: { cells: withStates(states) } }, MERGE_PATCH);
  const threeCells = { [one]: 'Normal', [two]: 'Normal', [three]: 'Normal' };
  const joining = { ...threeCells, [four]: 'Joining' };
  await setCells(threeCells);

  for (const client of [controlPlane, ...[one, two, three].map((id) => cells.get(id)!)])
    await call(client, 'POST', '/api/v1/namespaces', { metadata: { name: NAMESPACE } });
  for (const id of ids)
    await call(cells.get(id)!, 'POST', '/api/v1/namespaces', { metadata: { name: BASELINE_NAMESPACE } });

  const before = RoutingTable.fromCellSet(parseCellSetSpec({ cells: withStates(threeCells) }));
  const after = RoutingTable.fromCellSet(parseCellSetSpec({ cells: withStates(joining) }));
  const names = Array.from({ length: OBJECTS }, (_, i) => `cm-${i}`);
  const keys = names.map((name) => before.keyOf({ namespace: NAMESPACE, name }));
  const oldCellOf = (i: number) => before.route(keys[i]!).oldCell;
  progress(`creating ${OBJECTS} ConfigMaps in 3 cells`);
  await forEachIndex('create', OBJECTS, 32, (i) =>
    call(cells.get(oldCellOf(i))!, 'POST', collection(NAMESPACE), configMap(names[i]!, i)),
  );
  const moving = names.map((_, i) => i).filter((i) => after.route(keys[i]!).newCell === four);
  const plan = planMigration(
    keys,
    before.currentRing,
    HashRing.build(withStates({ ...threeCells, [four]: 'Normal' })),
  );

  // Where each arm's time goes: the CPU of every cell's apiserver and etcd, and of the mover (this loop; the
  // controller).
  const daemons = ids.flatMap((id) => env.daemonPids(id));
  const cpuOf = (mover: number) => ({
    apiserversAndEtcds: cpuMicros(...daemons),
    mover: cpuMicros(mover),
  });
  const cpuPerMoveMs = (from: ReturnType<typeof cpuOf>, to: ReturnType<typeof cpuOf>) => ({
    apiserversAndEtcds: round((to.apiserversAndEtcds - from.apiserversAndEtcds) / 1000 / moving.length, 2),
    mover: round((to.mover - from.mover) / 1000 / moving.length, 2),
  });
  /**
   * The protocol by a plain loop, `concurrency` at a time, on twins of the moving objects in their old cells:
   * its time, CPU and fence windows; the twins are deleted after (to the controller they would be strays).
   */
  const protocolLoop = async (concurrency: number) => {
    progress(`baseline: ${moving.length} twins of the moving objects`);
    const twinVersions: string[] = [];
    await forEachIndex('twins', moving.length, 32, async (k) => {
      const i = moving[k]!;
      const made = JSON.parse(
        await call(cells.get(oldCellOf(i))!, 'POST', collection(BASELINE_NAMESPACE), configMap(names[i]!, i)),
      ) as { metadata: { resourceVersion: string } };
      twinVersions[k] = made.metadata.resourceVersion;
    });
    progress(`baseline: fence, copy, label migrated, ${concurrency} at a time`);
    const cpuBefore = cpuOf(process.pid);
    const loopStarted = performance.now();
    await forEachIndex('baseline', moving.length, concurrency, async (k) => {
      const i = moving[k]!;
      const old = cells.get(oldCellOf(i))!;
      const path = `${collection(BASELINE_NAMESPACE)}/${names[i]}`;
      const mark = (resourceVersion: string, status: string, annotation: string) =>
        call(
          old,
          'PATCH',
          path,
          {
            metadata: {
              resourceVersion,
              labels: { [REBALANCE_STATUS_LABEL]: status },
              annotations: { [annotation]: new Date().toISOString() },
            },
          },
          MERGE_PATCH,
        );
      const fenced = JSON.parse(await mark(twinVersions[k]!, MIGRATING, FENCED_AT_ANNOTATION)) as {
        metadata: ListItem['metadata'] & { resourceVersion: string };
      } & Record<string, unknown>;
      const { name, labels, annotations } = fenced.metadata;
      const { [REBALANCE_STATUS_LABEL]: _status, ...copiedLabels } = labels ?? {};
      await call(cells.get(four)!, 'POST', collection(BASELINE_NAMESPACE), {
        ...fenced,
        metadata: { name, labels: copiedLabels, annotations },
      });
      await mark(fenced.metadata.resourceVersion, MIGRATED, MIGRATED_AT_ANNOTATION);
    });
    const seconds = (performance.now() - loopStarted) / 1000;
    const cpu = cpuPerMoveMs(cpuBefore, cpuOf(process.pid));
    progress(`baseline: ${round(seconds, 2)} s; CPU ms per move: ${JSON.stringify(cpu)}`);
    // The loop's fence windows, read from its twins' marks as the controller's are from its objects'.
    const fences = await fenceWindows(BASELINE_NAMESPACE);
    for (const id of ids) await call(cells.get(id)!, 'DELETE', collection(BASELINE_NAMESPACE));
    return { seconds, cpu, fences };
  };
  const baseline = await protocolLoop(WINDOW);
  const { seconds: baselineSeconds, cpu: baselineCpu, fences: baselineFences } = baseline;

  // cellfed: the controller, from the CellSet change to the joining cell turning Normal.
  const controller = await env.startController(
    'rebalance-controller',
    ['--window', String(WINDOW), '--fence-target', FENCE_TARGET, '--delete-after', '1h'],
    [one, two, three],
  );
  pinning = env.pinForComparison([controller.child]);
  progress(`cellfed: the rebalance controller moves them (window ${WINDOW}, fence target ${FENCE_TARGET})`);
  const scrape = async () => (await fetch(`http://127.0.0.1:${controller.httpPort}/metrics`)).text();
  const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  const cellfedCpuBefore = cpuOf(controller.child.pid!);
  const started = performance.now();
  await setCells(joining);
  // The adapted window, sampled while objects are in flight.
  const windowSamples: number[] = [];
  const sampling = setInterval(() => {
    void scrape().then(
      (text) => {
        if (gauge(text, 'cellfed_rebalance_objects_in_flight') > 0)
          windowSamples.push(gauge(text, 'cellfed_rebalance_fence_window'));
      },
      () => undefined,
    );
  }, 250);
  let status: { lastRebalance?: { seconds?: number; moved?: number } } = {};
  for (;;) {
    const cellSet = JSON.parse(await call(controlPlane, 'GET', CELLSET)) as {
      spec: { cells: { id: string; state: string }[] };
      status?: typeof status;
    };
    if (cellSet.spec.cells.find((cell) => cell.id === four)?.state === 'Normal') {
      status = cellSet.status ?? {};
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const migrationSeconds = (performance.now() - started) / 1000;
  clearInterval(sampling);
  const meanWindow = windowSamples.reduce((sum, size) => sum + size, 0) / Math.max(1, windowSamples.length);
  const cellfedCpu = cpuPerMoveMs(cellfedCpuBefore, cpuOf(controller.child.pid!));
  progress(`cellfed: ${round(migrationSeconds, 2)} s; CPU ms per move: ${JSON.stringify(cellfedCpu)}`);

  // What the controller did for it: moves by result and reconciles, from its /metrics.
  const metrics = await scrape();
  /** The sum of a metric's series whose labels include `labels`. */
  const sum = (name: string, labels: string) =>
    [...metrics.matchAll(new RegExp(`^${name}\\{[^}]*${labels}[^}]*\\} (\\S+)$`, 'gm'))]
      .map((match) => Number(match[1]))
      .reduce((total, value) => total + value, 0);
  const migrations = Object.fromEntries(
    ['moved', 'already_moved', 'conflict', 'failed'].map((result) => [
      result,
      sum('cellfed_rebalance_migrations_total', `result="${result}"`),
    ]),
  );
  const reconciles = sum('controller_runtime_reconcile_total', 'controller="migrations"');

  // Each moved object's fence window, from the marks on its old copy.
  const fences = await fenceWindows(NAMESPACE);
  const moved = fences.length;

  // The loop again, as many at once as the controller's window held on average, with the controller gone
  // and its write fence policy too (it refuses the loop's marks, which it does not know as cellfed's).
  controller.child.kill('SIGTERM');
  await new Promise((resolve) => controller.child.once('exit', resolve));
  for (const id of ids)
    await call(
      cells.get(id)!,
      'DELETE',
      `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${FENCE_POLICY_NAME}`,
    ).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 2000)); // the apiservers' admission sees the binding go
  const sameWindow = Math.max(1, Math.round(meanWindow));
  const atSameWindow = await protocolLoop(sameWindow);
  const figures = {
    fenceP50Ms: percentile(fences, 50),
    fenceP99Ms: percentile(fences, 99),
    objectsPerSecond: round(moved / migrationSeconds, 1),
    vsProtocolLoopRatio: round(migrationSeconds / baselineSeconds, 3),
    // Objects/s over the loop's at the controller's mean adapted window (about the same fences).
    vsLoopAtSameWindowRatio: round(moved / migrationSeconds / (moving.length / atSameWindow.seconds), 3),
    movedOverOptimal: round(moved / plan.optimalMoved, 3),
  };
  writeResult(
    'rebalance',
    {
      benchmark: 'rebalance-controller: a 4th cell joins 3 cells holding N ConfigMaps',
      machine: { cpus: cpus().length, model: cpus()[0]?.model },
      pinning,
      objects: OBJECTS,
      window: WINDOW,
      fenceTarget: FENCE_TARGET,
      goals: {
        fenceP50Ms: '≤ 100',
        fenceP99Ms: '≤ 200',
        objectsPerSecond: '≥ 300',
        vsProtocolLoopRatio: '≤ 1.3',
        movedOverOptimal: '≤ 1.05',
      },
      figures,
      measured: {
        moved,
        expectedMoves: moving.length,
        optimalMoved: round(plan.optimalMoved, 1),
        migrationSeconds: round(migrationSeconds, 2),
        gateOpenToFinishSeconds: status.lastRebalance?.seconds,
        migrations,
        migrationReconcilesPerMove: round(reconciles / Math.max(1, moved), 2),
        protocolLoopSeconds: round(baselineSeconds, 2),
        protocolLoopObjectsPerSecond: round(moving.length / baselineSeconds, 1),
        protocolLoopFenceP50Ms: percentile(baselineFences, 50),
        protocolLoopFenceP99Ms: percentile(baselineFences, 99),
        adaptedWindow: {
          mean: round(meanWindow, 1),
          min: Math.min(...windowSamples),
          max: Math.max(...windowSamples),
          samples: windowSamples.length,
        },
        protocolLoopAtSameWindow: {
          concurrency: sameWindow,
          seconds: round(atSameWindow.seconds, 2),
          objectsPerSecond: round(moving.length / atSameWindow.seconds, 1),
          fenceP50Ms: percentile(atSameWindow.fences, 50),
          fenceP99Ms: percentile(atSameWindow.fences, 99),
        },
        // CPU ms per moved object, over the arm's whole wall time: every cell's apiserver and etcd, and the mover
        // (the controller; the plain loop, which is this process).
        cpuPerMoveMs: { cellfed: cellfedCpu, protocolLoop: baselineCpu },
      },
    },
    figures,
  );
} finally {
  await env.down();
}
