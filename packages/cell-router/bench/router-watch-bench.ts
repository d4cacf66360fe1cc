// `npx nx run cell-router:bench-watch` (outside CI: minutes): writes bench/results/router-watch.json.
// What client watches cost: 1, 100 and 1,000 watches of one namespace's ConfigMaps (~1 KB) and Pods (~4 KB),
// all of one identity, through the router (3 cells) and straight to one apiserver (the control plane's, in a
// namespace of its own that the router's watches never read), while objects are created at 500 a second
// (in the cell the ring names, or in the one apiserver: no write passes through the router). Per phase:
// every watch must see every object (an event arriving > 1 s after its create was sent is late), and the
// CPU of the router, of the cells' apiservers and etcds, and of the one apiserver and etcd, each less what it
// spent idle over as long with the same watches open:
//  - routerUsPerEventPerWatch / routerUsPerPodEventPerWatch: router CPU per event delivered per client watch
//    at 1,000 ConfigMap watches / 100 Pod watches (goal ≤ 3 / ≤ 10); the same at fewer in `phases`, and
//    what one more watch adds (routerUsPerEventPerAddedWatch, between the two largest counts);
//  - cellCpuPerEventAt1000WatchesRatio: the cells' CPU per event at 1,000 watches over the one apiserver's at
//    1,000 of its own (goal ≤ 1.2);
//  - upstreamWatchesPerCellAt1000: the watches each cell's apiserver counts open
//    (`apiserver_longrunning_requests`) while the router serves 1,000 (the design's figure: a few per router);
//  - eventsDroppedOrLate1000Watches: events of the 1,000-watch ConfigMap phase that never came or came late
//    (goal 0); the one apiserver's arm runs the same, so what this machine can deliver is beside it.
// One identity only: the router opens the same upstream watches for a thousand identities (each its own).
import { cpus } from 'node:os';

import { request, type Agent } from 'undici';

import {
  BenchEnv,
  call,
  cpuMicros,
  percentile,
  progress,
  reportedMemoryMb,
  residentMb,
  round,
  writeResult,
  type Pinning,
  type Target,
} from '@cellfed/bench-kit';

import { ringCells } from './ring-cells.ts';

const WATCHES = (process.env['CELLFED_BENCH_WATCHES'] ?? '1,100,1000').split(',').map(Number);
/**
 * Pods at fewer: at 100 watches and 500 Pods a second the router already falls minutes behind on this
 * machine (the figure is per event delivered, so it is the same whatever the count).
 */
const POD_WATCHES = (process.env['CELLFED_BENCH_POD_WATCHES'] ?? '1,100').split(',').map(Number);
const RATE = Number(process.env['CELLFED_BENCH_EVENT_RATE'] ?? 500);
/** Events per phase: fewer at the most watches, where each is delivered a thousand times. */
const eventsFor = (watches: number) => (watches >= 1000 ? 500 : 1500);
const LATE_MS = 1000;
/** How long after its last create a phase waits for every watch to have every event. */
const DRAIN_MS = 120_000;
const IDLE_MS = 2000;
const NAMESPACE = 'watch';
const DIRECT_NAMESPACE = 'watch-direct';

interface Kind {
  readonly name: 'configmaps' | 'pods';
  readonly object: (name: string) => unknown;
}

const configMap = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels: { app: 'fan-out', tier: 'backend' } },
  data: { 'settings.json': 'x'.repeat(600) },
});

/** A Pod as a Deployment's template makes it: two containers, probes, resources, env (~4 KB stored). */
const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    labels: { app: 'fan-out', 'pod-template-hash': '5d8f7c9b6', tier: 'backend' },
    annotations: { 'example.com/owner': 'team-7', 'example.com/revision': '42' },
  },
  spec: {
    automountServiceAccountToken: false,
    containers: ['app', 'sidecar'].map((container) => ({
      name: container,
      image: `registry.example.com/team-7/${container}:1.2.3`,
      args: ['--port=8080', '--log-level=info', '--metrics-port=9090'],
      ports: [
        { name: 'http', containerPort: 8080 },
        { name: 'metrics', containerPort: 9090 },
      ],
      env: Array.from({ length: 8 }, (_, i) => ({
        name: `SETTING_${i}`,
        value: `value-${i}-${'v'.repeat(20)}`,
      })),
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
      readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 },
      livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 },
    })),
  },
});

const KINDS: readonly Kind[] = [
  { name: 'configmaps' as const, object: configMap },
  { name: 'pods' as const, object: pod },
].filter((kind) => (process.env['CELLFED_BENCH_KINDS'] ?? 'configmaps,pods').split(',').includes(kind.name));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens a watch from a resourceVersion; answers its body. */
type WatchOpener = (from: string) => Promise<AsyncIterable<Buffer>>;

const RESOURCE_VERSION = Buffer.from('"resourceVersion":"');

/**
 * One client watch, read as a client that only counts would: each line's object name and version are found
 * by a scan (the load generator shares its core with the router; parsing every event would be the load's
 * cost). A stream its server ends is watched again from the last version it gave, as client-go's reflector
 * does: kube-apiserver closes a watcher it finds too slow.
 */
class WatchReader {
  received = 0;
  late = 0;
  errors = 0;
  /** How often its server ended the stream (no ERROR event) and it was watched again. */
  rewatches = 0;
  private readonly prefix: string;
  private readonly sent: Map<string, number>;
  private readonly delays: number[];
  private version: string;

  constructor(prefix: string, sent: Map<string, number>, delays: number[], from: string) {
    this.prefix = prefix;
    this.sent = sent;
    this.delays = delays;
    this.version = from;
  }

  async read(first: AsyncIterable<Buffer>, open: WatchOpener, signal: AbortSignal): Promise<void> {
    let body: AsyncIterable<Buffer> | undefined = first;
    while (!signal.aborted && this.errors === 0) {
      try {
        body ??= await open(this.version);
        let pending: Buffer | undefined;
        for await (const chunk of body) {
          let buffer = pending ? Buffer.concat([pending, chunk]) : chunk;
          let newline = buffer.indexOf(10);
          while (newline >= 0) {
            this.line(buffer.subarray(0, newline));
            buffer = buffer.subarray(newline + 1);
            newline = buffer.indexOf(10);
          }
          pending = buffer.length > 0 ? buffer : undefined;
        }
      } catch {
        if (!signal.aborted) await sleep(200);
      }
      body = undefined;
      if (!signal.aborted) this.rewatches += 1;
    }
  }

  private line(line: Buffer): void {
    const now = performance.now();
    if (line.indexOf('{"type":"ERROR"') === 0) {
      this.errors += 1;
      return;
    }
    const version = line.indexOf(RESOURCE_VERSION);
    if (version >= 0) {
      const start = version + RESOURCE_VERSION.length;
      this.version = line.toString('latin1', start, line.indexOf('"', start));
    }
    if (line.indexOf('{"type":"ADDED"') !== 0) return;
    const at = line.indexOf(this.prefix);
    if (at < 0) return;
    const name = line.toString('latin1', at, line.indexOf('"', at));
    const sentAt = this.sent.get(name);
    if (sentAt === undefined) return;
    this.received += 1;
    const delay = now - sentAt;
    if (delay > LATE_MS) this.late += 1;
    this.delays.push(delay);
  }
}

/** The sum of an apiserver's open WATCH requests of `resource` (its `apiserver_longrunning_requests`). */
async function openWatches(target: Target, resource: string): Promise<number> {
  const text = await call(target, 'GET', '/metrics');
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_longrunning_requests{')) continue;
    if (!line.includes(`resource="${resource}"`) || !line.includes('verb="WATCH"')) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/**
 * Waits until the router is quiet (under 5% of a core over a second) and the apiservers and etcds nearly so
 * (under 25%), for at most a minute: a phase's backlog (the router's late events, the watches it lets go,
 * the apiservers' closing watchers) must not be billed to the next one, nor slow its readers.
 */
async function settle(router: number, daemons: readonly number[]): Promise<void> {
  const until = performance.now() + 60_000;
  for (;;) {
    const before = [cpuMicros(router), cpuMicros(...daemons)];
    await sleep(1000);
    const quiet = cpuMicros(router) - before[0]! < 50_000 && cpuMicros(...daemons) - before[1]! < 250_000;
    if (quiet || performance.now() > until) return;
  }
}

interface Arm {
  readonly name: 'router' | 'direct';
  /** Where watches go. */
  readonly watched: Target;
  readonly namespace: string;
  /** Where the object named `name` is created. */
  readonly writeTo: (name: string) => Target;
  /** The processes whose CPU is the arm's apiservers' and etcds'. */
  readonly daemons: readonly number[];
}

interface Phase {
  kind: Kind['name'];
  arm: Arm['name'];
  watches: number;
  events: number;
  seconds: number;
  received: number;
  dropped: number;
  late: number;
  errors: number;
  /** Streams their server ended (without an ERROR event), each watched again from its last version. */
  rewatches: number;
  delayP50Ms: number;
  delayP99Ms: number;
  /** CPU less the idle rate, µs. */
  routerCpuUs?: number;
  daemonsCpuUs: number;
  routerUsPerEventPerWatch?: number;
  daemonsUsPerEvent: number;
  routerRssMb?: number;
  /** Of that RSS: V8's heap in use and reserved, and memory outside it that V8 knows of (Buffers). */
  routerMemory?: Record<string, number>;
  upstreamWatchesPerCell?: number[];
}

/** Creates `events` objects at RATE, `sent` recording when each create was sent. */
async function writeEvents(arm: Arm, kind: Kind, prefix: string, events: number, sent: Map<string, number>) {
  const path = `/api/v1/namespaces/${arm.namespace}/${kind.name}`;
  const started = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  for (let i = 0; i < events; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= 64) await Promise.race(inFlight);
    const name = `${prefix}${i}`;
    sent.set(name, performance.now());
    const write = call(arm.writeTo(name), 'POST', path, kind.object(name)).finally(() =>
      inFlight.delete(write),
    );
    inFlight.add(write);
  }
  await Promise.all(inFlight);
}

async function runPhase(
  arm: Arm,
  kind: Kind,
  watches: number,
  agent: Agent,
  router: { pid: number; httpPort: number; cells: Target[] },
): Promise<Phase> {
  const events = eventsFor(watches);
  const prefix = `${kind.name === 'pods' ? 'pod' : 'cm'}-${arm.name}-${watches}-`;
  const path = `/api/v1/namespaces/${arm.namespace}/${kind.name}`;
  // From a list's version, as an informer does: a watch from now would first replay what the namespace holds.
  const list = JSON.parse(await call(arm.watched, 'GET', `${path}?limit=1`)) as {
    metadata: { resourceVersion: string };
  };
  const from = list.metadata.resourceVersion;
  const sent = new Map<string, number>();
  const delays: number[] = [];
  const stop = new AbortController();
  const readers: WatchReader[] = [];
  const reading: Promise<void>[] = [];
  const open: WatchOpener = async (version) => {
    const response = await request(
      `${arm.watched.base}${path}?watch=1&resourceVersion=${encodeURIComponent(version)}`,
      { dispatcher: agent, signal: stop.signal, headers: { accept: 'application/json' } },
    );
    if (response.statusCode !== 200)
      throw new Error(`${arm.name} watch: ${response.statusCode} ${await response.body.text()}`);
    return response.body;
  };
  for (let opened = 0; opened < watches; opened += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, watches - opened) }, async () => {
        const body = await open(from);
        const reader = new WatchReader(prefix, sent, delays, from);
        readers.push(reader);
        reading.push(reader.read(body, open, stop.signal));
      }),
    );
  }
  await sleep(1000);
  const daemonsIdle = cpuMicros(...arm.daemons);
  const routerIdle = cpuMicros(router.pid);
  await sleep(IDLE_MS);
  const idleRate = {
    daemons: (cpuMicros(...arm.daemons) - daemonsIdle) / IDLE_MS,
    router: (cpuMicros(router.pid) - routerIdle) / IDLE_MS,
  };
  const upstreamWatchesPerCell =
    arm.name === 'router'
      ? await Promise.all(router.cells.map((cell) => openWatches(cell, kind.name)))
      : undefined;

  const started = performance.now();
  const [daemonsBefore, routerBefore] = [cpuMicros(...arm.daemons), cpuMicros(router.pid)];
  await writeEvents(arm, kind, prefix, events, sent);
  const deadline = performance.now() + DRAIN_MS;
  const complete = () => readers.every((reader) => reader.received >= events || reader.errors > 0);
  while (!complete() && performance.now() < deadline) await sleep(50);
  const elapsedMs = performance.now() - started;
  const daemonsCpuUs = cpuMicros(...arm.daemons) - daemonsBefore - idleRate.daemons * elapsedMs;
  const routerCpuUs = cpuMicros(router.pid) - routerBefore - idleRate.router * elapsedMs;
  const routerRssMb = round(residentMb(router.pid), 1);
  const memory =
    arm.name === 'router'
      ? Object.fromEntries(
          Object.entries(await reportedMemoryMb(router.httpPort)).map(([key, mb]) => [key, round(mb, 1)]),
        )
      : undefined;
  stop.abort();
  await Promise.all(reading);
  await settle(router.pid, arm.daemons);

  const received = readers.reduce((sum, reader) => sum + reader.received, 0);
  const sorted = delays.sort((a, b) => a - b);
  const phase: Phase = {
    kind: kind.name,
    arm: arm.name,
    watches,
    events,
    seconds: round(elapsedMs / 1000, 2),
    received,
    dropped: events * watches - received,
    late: readers.reduce((sum, reader) => sum + reader.late, 0),
    errors: readers.reduce((sum, reader) => sum + reader.errors, 0),
    rewatches: readers.reduce((sum, reader) => sum + reader.rewatches, 0),
    delayP50Ms: round(percentile(sorted, 50), 1),
    delayP99Ms: round(percentile(sorted, 99), 1),
    daemonsCpuUs: Math.round(daemonsCpuUs),
    daemonsUsPerEvent: round(daemonsCpuUs / events, 1),
    ...(arm.name === 'router'
      ? {
          routerCpuUs: Math.round(routerCpuUs),
          // Per event delivered: an event a watch never got cost the router nothing yet.
          routerUsPerEventPerWatch: round(routerCpuUs / Math.max(received, 1), 2),
          routerRssMb,
          routerMemory: memory,
          upstreamWatchesPerCell,
        }
      : {}),
  };
  progress(
    `${kind.name} × ${watches} watches, ${arm.name}: ${phase.received}/${events * watches} events in ${phase.seconds} s (late ${phase.late}, errors ${phase.errors}, rewatches ${phase.rewatches}, p99 ${phase.delayP99Ms} ms); apiservers ${phase.daemonsUsPerEvent} µs/event${arm.name === 'router' ? `; router ${phase.routerUsPerEventPerWatch} µs/event/watch, RSS ${routerRssMb} MiB (${JSON.stringify(memory)}), upstream watches per cell ${upstreamWatchesPerCell?.join('/')}` : ''}`,
  );
  return phase;
}

let pinning: Pinning | undefined;
const bench = BenchEnv.up('router-watch-bench', 3);
let result: Record<string, unknown>;
try {
  const { env } = bench;
  const direct: Target = { base: env.controlPlane.url, agent: bench.agent('control-plane') };
  const { cells, cellOf } = await ringCells(bench, NAMESPACE);
  await call(direct, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: DIRECT_NAMESPACE },
  });
  // Without controller managers no ServiceAccount is made for a namespace; Pods need their `default`.
  for (const [target, namespace] of [
    [direct, DIRECT_NAMESPACE],
    ...[...cells.values()].map((cell) => [cell, NAMESPACE] as const),
  ] as const)
    await call(target, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default' },
    });
  const most = Math.max(...WATCHES);
  /** The most watches any phase opens at once. */
  const mostOfAnyKind = Math.max(most, ...POD_WATCHES);
  // One caller holding a thousand watches: past the router's defaults for one caller (250) and all (1,000).
  const started = await bench.startRouter([
    ...['--max-long-running-per-caller', String(mostOfAnyKind + 100)],
    ...['--max-long-running', String(mostOfAnyKind + 100)],
  ]);
  const routed: Target = { base: started.url, agent: bench.agent('control-plane') };
  pinning = bench.pinForComparison([started.child]);
  progress(`pinning: ${JSON.stringify(pinning)}`);
  // A connection per watch (HTTP/1.1, as a thousand separate clients would have).
  const watchAgent = bench.agent('control-plane', 'control-plane', { connections: mostOfAnyKind + 10 });
  const cellDaemons = [env.controlPlane.id, ...env.cells.map((cell) => cell.id)].flatMap((id) =>
    bench.daemonPids(id),
  );
  const arms: readonly Arm[] = [
    {
      name: 'direct',
      watched: direct,
      namespace: DIRECT_NAMESPACE,
      writeTo: () => direct,
      daemons: bench.daemonPids(env.controlPlane.id),
    },
    // The control plane is a source of what cells make (Pods): its CPU counts with the cells'.
    { name: 'router', watched: routed, namespace: NAMESPACE, writeTo: cellOf, daemons: cellDaemons },
  ];
  const routerInfo = { pid: started.child.pid!, httpPort: started.httpPort, cells: [...cells.values()] };
  const phases: Phase[] = [];
  for (const kind of KINDS)
    for (const watches of kind.name === 'pods' ? POD_WATCHES : WATCHES)
      for (const arm of arms) phases.push(await runPhase(arm, kind, watches, watchAgent, routerInfo));

  const at = (kind: Kind['name'], arm: Arm['name'], watches: number) =>
    phases.find((one) => one.kind === kind && one.arm === arm && one.watches === watches);
  /** What one more watch adds to the router's CPU per event, between the two largest counts. */
  const slope = (kind: Kind['name'], counts: readonly number[]) => {
    const [a, b] = counts.slice(-2).map((watches) => at(kind, 'router', watches)!);
    // Per event delivered to every watch (a late phase may not have delivered them all).
    const perEvent = (phase: Phase) => phase.routerCpuUs! / (phase.received / phase.watches);
    return round((perEvent(b!) - perEvent(a!)) / (b!.watches - a!.watches), 2);
  };
  const rssSlope = () => {
    const [a, b] = [at('configmaps', 'router', WATCHES[0]!)!, at('configmaps', 'router', most)!];
    return round(((b.routerRssMb! - a.routerRssMb!) * 1024) / (b.watches - a.watches), 1);
  };
  const cm = at('configmaps', 'router', most);
  const cmDirect = at('configmaps', 'direct', most);
  const mostPods = Math.max(...POD_WATCHES);
  const pods = at('pods', 'router', mostPods);
  const podsDirect = at('pods', 'direct', mostPods);
  const figures = {
    watchesLarge: most,
    podWatchesLarge: mostPods,
    routerUsPerEventPerWatch: cm?.routerUsPerEventPerWatch,
    routerUsPerPodEventPerWatch: pods?.routerUsPerEventPerWatch,
    routerUsPerEventPerAddedWatch: cm && WATCHES.length > 1 ? slope('configmaps', WATCHES) : undefined,
    routerUsPerPodEventPerAddedWatch: pods && POD_WATCHES.length > 1 ? slope('pods', POD_WATCHES) : undefined,
    cellCpuPerEventAt1000WatchesRatio: cm && round(cm.daemonsUsPerEvent / cmDirect!.daemonsUsPerEvent, 2),
    podCellCpuPerEventRatio: pods && round(pods.daemonsUsPerEvent / podsDirect!.daemonsUsPerEvent, 2),
    upstreamWatchesPerCellAt1000: cm && Math.max(...cm.upstreamWatchesPerCell!),
    eventsDroppedOrLate1000Watches: cm && cm.dropped + cm.late,
    directEventsDroppedOrLate1000Watches: cmDirect && cmDirect.dropped + cmDirect.late,
    routerRssKbPerWatch: cm && WATCHES.length > 1 ? rssSlope() : undefined,
  };
  const goals = {
    routerUsPerEventPerWatch: 3,
    routerUsPerPodEventPerWatch: 10,
    cellCpuPerEventAt1000WatchesRatio: 1.2,
    eventsDroppedOrLate1000Watches: 0,
  };
  result = {
    benchmark: 'router-watch',
    date: new Date().toISOString(),
    machine: { node: process.version, cpus: cpus().length, model: cpus()[0]?.model },
    pinning,
    cells: env.cells.length,
    eventRate: RATE,
    lateMs: LATE_MS,
    description:
      'N client watches of one identity (HTTP/1.1, a connection each) of one namespace, through the router (3 cells) and straight to one apiserver, while objects are created at the event rate; CPU less the idle rate with the same watches open; late: an event arriving more than lateMs after its create was sent',
    figures,
    goals,
    met: {
      routerUsPerEventPerWatch:
        (figures.routerUsPerEventPerWatch ?? Infinity) <= goals.routerUsPerEventPerWatch,
      routerUsPerPodEventPerWatch:
        (figures.routerUsPerPodEventPerWatch ?? Infinity) <= goals.routerUsPerPodEventPerWatch,
      cellCpuPerEventAt1000WatchesRatio:
        (figures.cellCpuPerEventAt1000WatchesRatio ?? Infinity) <= goals.cellCpuPerEventAt1000WatchesRatio,
      eventsDroppedOrLate1000Watches: figures.eventsDroppedOrLate1000Watches === 0,
    },
    phases,
  };
} finally {
  await bench.down();
}
writeResult('router-watch', result, result['figures']);
