// `npx nx run cell-router:bench-list`: writes bench/results/router-list.json.
// Side by side in one run: N ConfigMaps (30k unless CELLFED_BENCH_OBJECTS) in one real apiserver listed
// directly, and N ConfigMaps of the same shape spread over 3 cells (each in the cell the ring names) listed
// through the router.
//  - list30kRatio: a whole list, router / direct (goal ≤ 1.2);
//  - list30kPagedRatio: the same walked with limit=500 and continue (goal ≤ 1.3);
//  - watchAddedP99Ms: p99 of (arrival through the router − arrival on a direct watch of the object's cell)
//    for ADDED events (goal ≤ 5);
//  - watchListInitialS / watchListInitialRatio: a streaming list (watch with sendInitialEvents, as client-go
//    informers start by default) until its initial-events-end bookmark, router / direct (goal ≤ 1.3);
//  - routerRssGrowthOverResponse: how much the fresh router's resident memory grew during its first whole
//    list, over the list's size (goal ≤ 1.5: the router holds no cell's answer, only each cell's next
//    item); routerRssMbDuringList / …PagedList: its largest resident memory over all the runs.
import { cpus } from 'node:os';

import { request } from 'undici';

import {
  BenchEnv,
  call,
  cpuMicros,
  forEachIndex,
  median,
  percentile,
  progress,
  residentMb,
  round,
  writeResult,
  type Pinning,
  type Target,
} from '@cellfed/bench-kit';

import { walkPages } from './paged-walk.ts';
import { ringCells } from './ring-cells.ts';

const OBJECTS = Number(process.env['CELLFED_BENCH_OBJECTS'] ?? 30_000);
const RUNS = Number(process.env['CELLFED_BENCH_RUNS'] ?? 5);
const WATCH_EVENTS = Number(process.env['CELLFED_BENCH_WATCH_EVENTS'] ?? 300);
const NAMESPACE = 'bench';
const PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps`;

/** A small, ordinary ConfigMap: a few labels, an annotation, 256 bytes of data (as in the kit's bench). */
const configMap = (name: string, i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    labels: { app: `app-${i % 500}`, tier: 'backend', 'cellfed.io/bench': 'true' },
    annotations: { 'example.com/owner': `team-${i % 40}` },
  },
  data: { 'settings.json': 'x'.repeat(256) },
});

/** Creates `count` objects with `place(i)` saying where each goes, 32 at a time, with progress. */
function createAll(what: string, count: number, place: (i: number) => { target: Target; name: string }) {
  return forEachIndex(what, count, 32, (i) => {
    const { target, name } = place(i);
    return call(target, 'POST', PATH, configMap(name, i));
  });
}

/** A watch's lines (its events), as they arrive. */
async function* lines(body: AsyncIterable<unknown>): AsyncGenerator<string> {
  let pending = '';
  for await (const chunk of body) {
    pending += (chunk as Buffer).toString();
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      yield pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  }
}

/** Seconds to receive a whole list, how many items it held, and its size. */
async function listOnce(target: Target): Promise<{ seconds: number; items: number; bytes: number }> {
  const started = performance.now();
  const text = await call(target, 'GET', PATH);
  const seconds = (performance.now() - started) / 1000;
  return {
    seconds,
    items: (JSON.parse(text) as { items: unknown[] }).items.length,
    bytes: Buffer.byteLength(text),
  };
}

/**
 * Seconds until a streaming list (`sendInitialEvents`) has given every object and its initial-events-end
 * bookmark, and how many ADDED events came before it.
 */
async function watchListOnce(target: Target): Promise<{ seconds: number; items: number }> {
  const stop = new AbortController();
  const started = performance.now();
  const query =
    'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=120';
  const response = await request(`${target.base}${PATH}?${query}`, {
    dispatcher: target.agent,
    signal: stop.signal,
  });
  if (response.statusCode !== 200)
    throw new Error(`watch list: ${response.statusCode} ${await response.body.text()}`);
  let items = 0;
  try {
    for await (const line of lines(response.body)) {
      // Only the type and, for a bookmark, its annotation are read: the event's object is not parsed.
      if (line.startsWith('{"type":"ADDED"')) items += 1;
      else if (line.startsWith('{"type":"BOOKMARK"') && line.includes('"k8s.io/initial-events-end":"true"'))
        return { seconds: (performance.now() - started) / 1000, items };
    }
  } finally {
    stop.abort();
  }
  throw new Error(`watch list ended after ${items} objects without its initial-events-end bookmark`);
}

/** The resident memory of a process now, in MiB. */
const rssMb = (pid: number) => round(residentMb(pid), 1);

/** The largest resident memory of a process while `work` runs, in MiB. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; rssMb: number }> {
  let peak = 0;
  const sample = () => (peak = Math.max(peak, residentMb(pid)));
  const timer = setInterval(sample, 25);
  try {
    const result = await work();
    sample();
    return { result, rssMb: round(peak, 1) };
  } finally {
    clearInterval(timer);
  }
}

/** Opens a watch and records when each ADDED object arrived (by name). */
async function watchArrivals(
  target: Target,
  arrivals: Map<string, number>,
  signal: AbortSignal,
): Promise<void> {
  // From a list's version, as an informer does: a watch without one would first replay every object.
  const list = JSON.parse(await call(target, 'GET', `${PATH}?limit=1`)) as {
    metadata: { resourceVersion: string };
  };
  const from = encodeURIComponent(list.metadata.resourceVersion);
  const response = await request(`${target.base}${PATH}?watch=1&resourceVersion=${from}`, {
    dispatcher: target.agent,
    signal,
  });
  if (response.statusCode !== 200)
    throw new Error(`watch: ${response.statusCode} ${await response.body.text()}`);
  void (async () => {
    try {
      for await (const line of lines(response.body)) {
        const event = JSON.parse(line) as { type: string; object: { metadata: { name: string } } };
        if (event.type === 'ADDED' && !arrivals.has(event.object.metadata.name))
          arrivals.set(event.object.metadata.name, performance.now());
      }
    } catch {
      // aborted at the end
    }
  })();
}

let pinning: Pinning | undefined;
const bench = BenchEnv.up('router-list-bench', 3);
let result: Record<string, unknown>;
try {
  const { env } = bench;
  const direct: Target = { base: env.controlPlane.url, agent: bench.agent('control-plane') };
  const { cells, cellOf } = await ringCells(bench, NAMESPACE, [direct]);
  await createAll('direct', OBJECTS, (i) => ({ target: direct, name: `config-${i}` }));
  await createAll('cells', OBJECTS, (i) => ({ target: cellOf(`config-${i}`), name: `config-${i}` }));

  const started = await bench.startRouter();
  const routed: Target = { base: started.url, agent: bench.agent('control-plane') };
  const pid = started.child.pid!;
  // Apiservers and etcds on CPU 0, the router and this load generator on CPU 1, in both arms.
  pinning = bench.pinForComparison([started.child]);
  progress(`pinning: ${JSON.stringify(pinning)}`);

  const runs = {
    direct: [] as number[],
    router: [] as number[],
    directPaged: [] as number[],
    routerPaged: [] as number[],
    directWatchList: [] as number[],
    routerWatchList: [] as number[],
  };
  // CPU seconds per whole and per paged list (summed over runs, divided at the end): the router; the cells'
  // apiservers and etcds behind it; the one apiserver and etcd of the direct arm. Says which side waits.
  const cellDaemons = env.cells.flatMap((cell) => bench.daemonPids(cell.id));
  const directDaemons = bench.daemonPids(env.controlPlane.id);
  const perList = (cpu: { router: number; cells: number; direct: number }) => ({
    router: round(cpu.router / RUNS / 1e6, 3),
    cellsBehindRouter: round(cpu.cells / RUNS / 1e6, 3),
    direct: round(cpu.direct / RUNS / 1e6, 3),
  });
  const listCpu = { router: 0, cells: 0, direct: 0 };
  const pagedCpu = { router: 0, cells: 0, direct: 0 };
  let routerRssMb = 0;
  let routerRssPagedMb = 0;
  let pages = 0;
  // What one whole list costs the router's memory, measured first, on the fresh process: V8 keeps the heap
  // it grew for anything since (pages, watch lists), so later peaks say more about the paged path.
  await listOnce(direct);
  const idleRssMb = rssMb(pid);
  const fresh = await peakRss(pid, () => listOnce(routed));
  const growthMb = Math.max(0, fresh.rssMb - idleRssMb);
  const responseMb = round(fresh.result.bytes / 1024 / 1024, 1);
  for (let run = 1; run <= RUNS; run++) {
    const directCpu = cpuMicros(...directDaemons);
    const d = await listOnce(direct);
    listCpu.direct += cpuMicros(...directDaemons) - directCpu;
    const [routerCpu, cellsCpu] = [cpuMicros(pid), cpuMicros(...cellDaemons)];
    const r = await peakRss(pid, () => listOnce(routed));
    listCpu.router += cpuMicros(pid) - routerCpu;
    listCpu.cells += cpuMicros(...cellDaemons) - cellsCpu;
    const directPagedCpu = cpuMicros(...directDaemons);
    const dp = await walkPages(direct, PATH);
    pagedCpu.direct += cpuMicros(...directDaemons) - directPagedCpu;
    const [routerPagedCpu, cellsPagedCpu] = [cpuMicros(pid), cpuMicros(...cellDaemons)];
    const rp = await peakRss(pid, () => walkPages(routed, PATH));
    pagedCpu.router += cpuMicros(pid) - routerPagedCpu;
    pagedCpu.cells += cpuMicros(...cellDaemons) - cellsPagedCpu;
    const dw = await watchListOnce(direct);
    const rw = await watchListOnce(routed);
    for (const [what, items] of [
      ['direct', d.items],
      ['router', r.result.items],
      ['direct paged', dp.items],
      ['router paged', rp.result.items],
      ['direct watch list', dw.items],
      ['router watch list', rw.items],
    ] as const) {
      if (items !== OBJECTS) throw new Error(`${what} list held ${items} items, not ${OBJECTS}`);
    }
    runs.direct.push(d.seconds);
    runs.router.push(r.result.seconds);
    runs.directPaged.push(dp.seconds);
    runs.routerPaged.push(rp.result.seconds);
    runs.directWatchList.push(dw.seconds);
    runs.routerWatchList.push(rw.seconds);
    routerRssMb = Math.max(routerRssMb, r.rssMb);
    routerRssPagedMb = Math.max(routerRssPagedMb, rp.rssMb);
    pages = rp.result.pages;
    progress(
      `run ${run}/${RUNS}: whole list ${round(d.seconds, 3)} s direct, ${round(r.result.seconds, 3)} s router; paged ${round(dp.seconds, 3)} s / ${round(rp.result.seconds, 3)} s; watch list ${round(dw.seconds, 3)} s / ${round(rw.seconds, 3)} s; router RSS ${r.rssMb}/${rp.rssMb} MiB (idle ${idleRssMb}, list ${responseMb} MiB)`,
    );
  }

  // Watch latency: one direct watch per cell and one through the router, the same creates seen by both.
  const stop = new AbortController();
  const directArrivals = new Map<string, number>();
  const routerArrivals = new Map<string, number>();
  for (const target of cells.values()) await watchArrivals(target, directArrivals, stop.signal);
  await watchArrivals(routed, routerArrivals, stop.signal);
  for (let i = 0; i < WATCH_EVENTS; i++) {
    const name = `watched-${i}`;
    await call(cellOf(name), 'POST', PATH, configMap(name, i));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const deadline = Date.now() + 10_000;
  while (routerArrivals.size < WATCH_EVENTS && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  stop.abort();
  const delays = [...routerArrivals]
    .filter(([name]) => directArrivals.has(name))
    .map(([name, at]) => at - directArrivals.get(name)!)
    .sort((a, b) => a - b);
  if (delays.length < WATCH_EVENTS)
    throw new Error(`only ${delays.length}/${WATCH_EVENTS} events arrived through both`);

  const figures = {
    list30kRatio: round(median(runs.router) / median(runs.direct), 3),
    list30kPagedRatio: round(median(runs.routerPaged) / median(runs.directPaged), 3),
    watchAddedP99Ms: round(percentile(delays, 99), 2),
    watchAddedP50Ms: round(percentile(delays, 50), 2),
    watchListInitialS: round(median(runs.routerWatchList), 3),
    watchListInitialDirectS: round(median(runs.directWatchList), 3),
    watchListInitialRatio: round(median(runs.routerWatchList) / median(runs.directWatchList), 3),
    routerRssMbDuringList: routerRssMb,
    routerRssMbDuringPagedList: routerRssPagedMb,
    routerIdleRssMb: idleRssMb,
    routerRssMbDuringFirstList: fresh.rssMb,
    listResponseMb: responseMb,
    routerRssGrowthOverResponse: round(growthMb / responseMb, 2),
  };
  const goals = {
    list30kRatio: 1.2,
    list30kPagedRatio: 1.3,
    watchAddedP99Ms: 5,
    watchListInitialRatio: 1.3,
    routerRssGrowthOverResponse: 1.5,
  };
  result = {
    benchmark: 'router-list',
    date: new Date().toISOString(),
    machine: { node: process.version, cpus: cpus().length },
    pinning,
    objects: OBJECTS,
    cells: env.cells.length,
    description:
      'ConfigMaps of the same shape: N in one apiserver listed directly vs N over the cells listed through the router (median of runs, seconds to the whole body); paged walks use limit=500; watch lists run until their initial-events-end bookmark; RSS growth is the peak of the fresh router during its first whole list above its idle RSS',
    figures,
    goals,
    met: {
      list30kRatio: figures.list30kRatio <= goals.list30kRatio,
      list30kPagedRatio: figures.list30kPagedRatio <= goals.list30kPagedRatio,
      watchAddedP99Ms: figures.watchAddedP99Ms <= goals.watchAddedP99Ms,
      watchListInitialRatio: figures.watchListInitialRatio <= goals.watchListInitialRatio,
      routerRssGrowthOverResponse: figures.routerRssGrowthOverResponse <= goals.routerRssGrowthOverResponse,
    },
    seconds: {
      direct: runs.direct.map((s) => round(s, 3)),
      router: runs.router.map((s) => round(s, 3)),
      directPaged: runs.directPaged.map((s) => round(s, 3)),
      routerPaged: runs.routerPaged.map((s) => round(s, 3)),
      directWatchList: runs.directWatchList.map((s) => round(s, 3)),
      routerWatchList: runs.routerWatchList.map((s) => round(s, 3)),
    },
    pagesThroughRouter: pages,
    cpuPerWholeListS: perList(listCpu),
    cpuPerPagedListS: perList(pagedCpu),
  };
} finally {
  await bench.down();
}
writeResult('router-list', result, result['figures']);
