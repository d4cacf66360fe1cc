// `npx nx run cell-router:bench`: writes bench/results/router.json.
// One real cell (etcd + kube-apiserver, from `cells up --cells 1`) and the router process in front of it.
// The same load runs directly against the cell and through the router, in alternating rounds of one run:
//  - GET of one ConfigMap at fixed concurrency: p50, p99 and requests per second;
//  - create of ConfigMaps (unique names) at fixed concurrency: p50.
// A third mode, a bare Node.js proxy (bench/bare-proxy.ts), shows what any proxy in Node costs here; a fourth,
// a Go standard-library reverse proxy (e2e/tools/bench-proxy, built with the Kubernetes tools into
// CELLFED_TOOLS_BIN), what a Go L7 gateway costs on the same core: the peer-class floor.
// figures.*Ratio = router / direct; bareProxyFigures / goProxyFigures: the same of each baseline proxy;
// figures.getP50OverGoProxy = the router's p50 ratio over the Go proxy's (goal ≤ 1).
// The identity path: three more Go arms pass the caller's identity to the cell by requestheader (the
// front-proxy-client certificate and X-Remote-* headers, as kube-aggregator does) and speak HTTP/2 to it;
// identityPath has the cell's apiserver + etcd CPU per GET of each arm over the direct arm's, and
// figures.apiserverUsPerRoutedGetOverDirect the router's (goal ≤ 1.05). Those come from a phase of GETs at
// one fixed rate in every arm (FIXED_RATE, below the slowest arm's most): an apiserver spends less CPU per
// request the busier it is (fewer wake-ups per request), so per-GET costs are compared at the same rate. Goals: getP50Ratio ≤ 1.15, getP99Ratio ≤ 1.5, throughputRatio ≥ 0.9.
// Pinned (bench-kit's PINNING, recorded in `pinning`): apiservers and etcds on CPU 0, the router (or bare
// proxy) and this load generator on CPU 1, in every arm. CPU cost: CPU time per GET of the router process
// over that of the cell's apiserver + etcd serving the direct GETs (/proc); goal ≤ 0.25.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

import { request, type Agent } from 'undici';

import {
  BenchEnv,
  cpuMicros,
  percentile,
  progress,
  round,
  writeResult,
  type EnvFile,
  type Pinning,
} from '@cellfed/bench-kit';

const ROUNDS = Number(process.env['CELLFED_BENCH_ROUNDS'] ?? 3);
const GET_SECONDS = Number(process.env['CELLFED_BENCH_GET_SECONDS'] ?? 5);
const GET_CONCURRENCY = Number(process.env['CELLFED_BENCH_GET_CONCURRENCY'] ?? 8);
const CREATE_SECONDS = Number(process.env['CELLFED_BENCH_CREATE_SECONDS'] ?? 3);
const CREATE_CONCURRENCY = Number(process.env['CELLFED_BENCH_CREATE_CONCURRENCY'] ?? 4);
/** GETs per second of the fixed-rate phase: below what the slowest arm serves at GET_CONCURRENCY. */
const FIXED_RATE = Number(process.env['CELLFED_BENCH_FIXED_RATE'] ?? 1000);
/** Clients speak HTTP/2 to the cell, the router and the bare proxy when they offer it (kubectl does). */
const CLIENT_HTTP2 = process.env['CELLFED_BENCH_HTTP2'] === 'true';

/**
 * A baseline proxy in front of the same cell: the bare Node.js one (bench/bare-proxy.ts) or the Go one
 * (bench-proxy in CELLFED_TOOLS_BIN). Both take the cell's URL and PKI and the serving PKI, and print
 * their port.
 */
async function startProxy(
  bench: BenchEnv,
  cell: EnvFile['cells'][number],
  kind: 'node' | 'go',
  goFlags: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const pki = (id: string) => join(bench.dir, 'pki', id);
  const args = [cell.url, pki(cell.id), pki('control-plane')];
  const [command, argv] =
    kind === 'node'
      ? [process.execPath, [fileURLToPath(new URL('./bare-proxy.ts', import.meta.url)), ...args]]
      : [goProxyBinary(), [...goFlags, ...args]];
  const child = bench.own(spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] }));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ${kind} proxy exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(Number(line)));
  });
  return { url: `https://127.0.0.1:${port}`, child };
}

/** The Go proxy, built with the Kubernetes tools; a clear error when it is not there. */
function goProxyBinary(): string {
  const bin = process.env['CELLFED_TOOLS_BIN'];
  const binary = bin && join(bin, 'bench-proxy');
  if (!binary || !existsSync(binary))
    throw new Error(
      'the Go proxy (bench-proxy) is not built: run `bash scripts/build-tools.sh` and set CELLFED_TOOLS_BIN to the directory it prints',
    );
  return binary;
}

interface Load {
  latenciesMs: number[];
  requests: number;
  errors: number;
  seconds: number;
}

/** `concurrency` loops sending `one(i)` for `seconds`; every latency kept. */
async function load(
  concurrency: number,
  seconds: number,
  one: (i: number) => Promise<number>,
): Promise<Load> {
  const latenciesMs: number[] = [];
  let errors = 0;
  let next = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const code = await one(next++);
        latenciesMs.push(performance.now() - t0);
        if (code >= 300) errors += 1;
      }
    }),
  );
  return { latenciesMs, requests: latenciesMs.length, errors, seconds: (performance.now() - started) / 1000 };
}

/** GETs sent at `rate` per second for `seconds` (open loop: each at its time, whatever the others do). */
async function fixedRate(rate: number, seconds: number, one: () => Promise<number>): Promise<number> {
  const pending: Promise<number>[] = [];
  const started = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(one());
  }
  const codes = await Promise.all(pending);
  return codes.filter((code) => code >= 300).length;
}

const summary = (loads: Load[]) => {
  const sorted = loads.flatMap((one) => one.latenciesMs).sort((a, b) => a - b);
  const requests = loads.reduce((sum, one) => sum + one.requests, 0);
  const seconds = loads.reduce((sum, one) => sum + one.seconds, 0);
  return {
    requests,
    errors: loads.reduce((sum, one) => sum + one.errors, 0),
    p50Ms: round(percentile(sorted, 50), 3),
    p90Ms: round(percentile(sorted, 90), 3),
    p99Ms: round(percentile(sorted, 99), 3),
    requestsPerSecond: round(requests / seconds, 1),
  };
};

/** The Go proxy's arms: how each passes the caller's identity to the cell, over which protocol. */
const GO_ARMS = {
  goProxy: [],
  goImpersonateH2: ['-http2'],
  goRequestheader: ['-identity', 'requestheader'],
  goRequestheaderH2: ['-identity', 'requestheader', '-http2'],
} as const;
const MODES = [
  'direct',
  'router',
  'bareProxy',
  ...(Object.keys(GO_ARMS) as (keyof typeof GO_ARMS)[]),
] as const;
type Mode = (typeof MODES)[number];
const runs = Object.fromEntries(
  MODES.map((mode) => [mode, { get: [] as Load[], create: [] as Load[] }]),
) as Record<Mode, { get: Load[]; create: Load[] }>;
/** CPU time spent during each mode's GET loads: by the cell's apiserver + etcd, by the proxy in front. */
/** The cell's CPU during each mode's fixed-rate GETs, and how many were sent. */
const fixedRateCellUs = Object.fromEntries(
  MODES.map((mode) => [mode, { cell: 0, gets: 0, errors: 0 }]),
) as Record<Mode, { cell: number; gets: number; errors: number }>;
const getCpuUs = Object.fromEntries(MODES.map((mode) => [mode, { cell: 0, proxy: 0 }])) as Record<
  Mode,
  { cell: number; proxy: number }
>;
/** Every answer that was not a success, by arm and `METHOD code`: how many, and the first one's message. */
const failures: Partial<Record<Mode, Record<string, { count: number; first: string }>>> = {};
let pinning: Pinning | undefined;
const bench = BenchEnv.up('router-bench', 1);
try {
  const cell = bench.env.cells[0]!;
  const started = await bench.startRouter();
  const bare = await startProxy(bench, cell, 'node');
  const goArms = Object.fromEntries(
    await Promise.all(
      Object.entries(GO_ARMS).map(
        async ([arm, flags]) => [arm, await startProxy(bench, cell, 'go', flags)] as const,
      ),
    ),
  ) as Record<keyof typeof GO_ARMS, { url: string; child: ChildProcess }>;
  progress(`router at ${started.url}, bare proxy at ${bare.url}, Go proxies, cell ${cell.id} at ${cell.url}`);
  pinning = bench.pinForComparison([
    started.child,
    bare.child,
    ...Object.values(goArms).map((arm) => arm.child),
  ]);
  progress(`pinning: ${JSON.stringify(pinning)}`);
  const cellPids = bench.daemonPids(cell.id);
  const proxyPid: Record<Mode, number | undefined> = {
    direct: undefined,
    router: started.child.pid,
    bareProxy: bare.child.pid,
    ...Object.fromEntries(Object.entries(goArms).map(([arm, { child }]) => [arm, child.pid])),
  } as Record<Mode, number | undefined>;
  const cpuNow = (mode: Mode) => ({
    cell: cpuMicros(...cellPids),
    proxy: proxyPid[mode] === undefined ? 0 : cpuMicros(proxyPid[mode]),
  });

  // Direct: the cell's apiserver with the cell's admin certificate. Router and bare proxy: the control
  // plane's admin certificate (the router authenticates it, then impersonates it in the cell).
  const http2 = { http2: CLIENT_HTTP2 };
  const targets: Record<Mode, { mode: Mode; base: string; agent: Agent }> = {
    direct: { mode: 'direct', base: cell.url, agent: bench.agent(cell.id, cell.id, http2) },
    router: {
      mode: 'router',
      base: started.url,
      agent: bench.agent('control-plane', 'control-plane', http2),
    },
    bareProxy: {
      mode: 'bareProxy',
      base: bare.url,
      agent: bench.agent('control-plane', 'control-plane', http2),
    },
    ...Object.fromEntries(
      Object.entries(goArms).map(([arm, { url }]) => [
        arm,
        { mode: arm, base: url, agent: bench.agent('control-plane', 'control-plane', http2) },
      ]),
    ),
  } as Record<Mode, { mode: Mode; base: string; agent: Agent }>;
  const path = '/api/v1/namespaces/default/configmaps';
  await send(targets.direct, 'POST', path, {
    metadata: { name: 'bench-get' },
    data: { value: 'x'.repeat(256) },
  });

  for (const mode of MODES) {
    await load(GET_CONCURRENCY, 1, () => send(targets[mode], 'GET', `${path}/bench-get`)); // warm-up
    progress(`warmed up ${mode}`);
  }
  for (let round_ = 1; round_ <= ROUNDS; round_++) {
    // Alternate the order so drift on a shared machine does not favour one side.
    const order = round_ % 2 === 1 ? MODES : [...MODES].reverse();
    for (const name of order) {
      const target = targets[name];
      const cpuBefore = cpuNow(name);
      const gets = await load(GET_CONCURRENCY, GET_SECONDS, () => send(target, 'GET', `${path}/bench-get`));
      const cpuAfter = cpuNow(name);
      getCpuUs[name].cell += cpuAfter.cell - cpuBefore.cell;
      getCpuUs[name].proxy += cpuAfter.proxy - cpuBefore.proxy;
      const creates = await load(CREATE_CONCURRENCY, CREATE_SECONDS, (i) =>
        send(target, 'POST', path, {
          metadata: { name: `bench-${name.toLowerCase()}-${round_}-${i}` },
          data: { v: 'x' },
        }),
      );
      const fixedBefore = cpuNow(name);
      fixedRateCellUs[name].errors += await fixedRate(FIXED_RATE, GET_SECONDS, () =>
        send(target, 'GET', `${path}/bench-get`),
      );
      fixedRateCellUs[name].cell += cpuNow(name).cell - fixedBefore.cell;
      fixedRateCellUs[name].gets += FIXED_RATE * GET_SECONDS;
      runs[name].get.push(gets);
      runs[name].create.push(creates);
      progress(
        `round ${round_}/${ROUNDS} ${name}: GET ${summary([gets]).p50Ms} ms p50, ${summary([gets]).requestsPerSecond}/s; create ${summary([creates]).p50Ms} ms p50`,
      );
    }
  }
} finally {
  await bench.down();
}

async function send(
  target: { mode: Mode; base: string; agent: Agent },
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
) {
  const response = await request(`${target.base}${path}`, {
    method,
    dispatcher: target.agent,
    headers: { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (response.statusCode < 300) {
    await response.body.dump();
    return response.statusCode;
  }
  // A failure is counted by arm, method and code, with the first answer's message: enough to tell a
  // refusal of the router's own from the cell's.
  const text = await response.body.text();
  const key = `${method} ${response.statusCode}`;
  const byArm = (failures[target.mode] ??= {});
  const seen = byArm[key];
  if (seen) seen.count += 1;
  else byArm[key] = { count: 1, first: statusMessage(text) };
  return response.statusCode;
}

/** The `message` of a Kubernetes Status, or the answer's first 200 characters. */
function statusMessage(text: string): string {
  try {
    const status = JSON.parse(text) as { message?: unknown };
    if (typeof status.message === 'string') return status.message;
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 200);
}

const direct = { get: summary(runs.direct.get), create: summary(runs.direct.create) };
const routed = { get: summary(runs.router.get), create: summary(runs.router.create) };
const bareProxy = { get: summary(runs.bareProxy.get), create: summary(runs.bareProxy.create) };
const goProxy = { get: summary(runs.goProxy.get), create: summary(runs.goProxy.create) };
const ratios = (over: typeof direct) => ({
  getP50Ratio: round(over.get.p50Ms / direct.get.p50Ms, 3),
  getP99Ratio: round(over.get.p99Ms / direct.get.p99Ms, 3),
  throughputRatio: round(over.get.requestsPerSecond / direct.get.requestsPerSecond, 3),
  createP50Ratio: round(over.create.p50Ms / direct.create.p50Ms, 3),
});
/** CPU-µs per GET: the proxy's in its arm, the cell's (apiserver + etcd) serving the direct arm. */
const cpuPerGet = (mode: Mode, part: 'cell' | 'proxy') =>
  round(getCpuUs[mode][part] / Math.max(1, summary(runs[mode].get).requests), 1);
const cpuCost = {
  apiserverAndEtcdUsPerDirectGet: cpuPerGet('direct', 'cell'),
  routerUsPerGet: cpuPerGet('router', 'proxy'),
  bareProxyUsPerGet: cpuPerGet('bareProxy', 'proxy'),
  goProxyUsPerGet: cpuPerGet('goProxy', 'proxy'),
  apiserverAndEtcdUsPerRoutedGet: cpuPerGet('router', 'cell'),
};
const routedRatios = ratios(routed);
// The Go floor: a Go L7 gateway's class of cost on this core, the router's ratios against it.
const goProxyFigures = {
  ...ratios(goProxy),
  goProxyCpuPerGetOverApiserver: round(cpuCost.goProxyUsPerGet / cpuCost.apiserverAndEtcdUsPerDirectGet, 3),
};
/** The cell's apiserver + etcd CPU per GET at the fixed rate through `mode`. */
const cellUsAtFixedRate = (mode: Mode) =>
  round(fixedRateCellUs[mode].cell / Math.max(1, fixedRateCellUs[mode].gets), 1);
/** The same, over the direct arm's. */
const cellCpuOverDirect = (mode: Mode) =>
  round(cellUsAtFixedRate(mode) / Math.max(0.1, cellUsAtFixedRate('direct')), 3);
// What each way of passing the caller's identity costs the cell, beside the router's (impersonation, HTTP/1.1).
const identityPath = (
  ['goProxy', 'goImpersonateH2', 'goRequestheader', 'goRequestheaderH2', 'bareProxy', 'router'] as const
).map((mode) => ({
  arm: mode,
  identity: mode.startsWith('goRequestheader') ? 'requestheader' : 'impersonation',
  toCell: `${mode.endsWith('H2') ? 'HTTP/2' : 'HTTP/1.1'} (${mode.startsWith('go') ? 'Go net/http' : 'undici'})`,
  apiserverUsPerGetAtFixedRate: cellUsAtFixedRate(mode),
  apiserverUsPerGetOverDirect: cellCpuOverDirect(mode),
  apiserverUsPerGetAtMostLoad: cpuPerGet(mode, 'cell'),
  throughputRatio: round(summary(runs[mode].get).requestsPerSecond / direct.get.requestsPerSecond, 3),
  getP50Ratio: round(summary(runs[mode].get).p50Ms / direct.get.p50Ms, 3),
}));
const figures = {
  ...routedRatios,
  apiserverUsPerRoutedGetOverDirect: cellCpuOverDirect('router'),
  routerCpuPerGetOverApiserver: round(cpuCost.routerUsPerGet / cpuCost.apiserverAndEtcdUsPerDirectGet, 3),
  getP50OverGoProxy: round(routedRatios.getP50Ratio / goProxyFigures.getP50Ratio, 3),
  throughputOverGoProxy: round(routedRatios.throughputRatio / goProxyFigures.throughputRatio, 3),
  cpuPerGetOverGoProxy: round(cpuCost.routerUsPerGet / cpuCost.goProxyUsPerGet, 3),
  // The router's own work: its CPU per GET over a bare Node.js proxy's on the same TLS and HTTP stack.
  cpuPerGetOverBareProxy: round(cpuCost.routerUsPerGet / cpuCost.bareProxyUsPerGet, 3),
};
// What any Node.js proxy on this machine costs (TLS twice, one more process on the same cores): the part
// of the router's ratios that is not the router's own work.
const bareProxyFigures = {
  ...ratios(bareProxy),
  bareProxyCpuPerGetOverApiserver: round(
    cpuCost.bareProxyUsPerGet / cpuCost.apiserverAndEtcdUsPerDirectGet,
    3,
  ),
  // Node's floor against Go's: what no work of the router's own can take below.
  bareProxyCpuPerGetOverGoProxy: round(cpuCost.bareProxyUsPerGet / cpuCost.goProxyUsPerGet, 3),
};
const goals = {
  getP50Ratio: 1.15,
  getP99Ratio: 1.5,
  throughputRatio: 0.9,
  routerCpuPerGetOverApiserver: 0.25,
  getP50OverGoProxy: 1,
  cpuPerGetOverGoProxy: 1.2,
  apiserverUsPerRoutedGetOverDirect: 1.05,
};
const result = {
  benchmark: 'router',
  date: new Date().toISOString(),
  machine: { node: process.version, cpus: cpus().length },
  pinning,
  load: {
    rounds: ROUNDS,
    get: { concurrency: GET_CONCURRENCY, secondsPerRound: GET_SECONDS },
    fixedRateGet: { perSecond: FIXED_RATE, secondsPerRound: GET_SECONDS },
    create: { concurrency: CREATE_CONCURRENCY, secondsPerRound: CREATE_SECONDS },
    clientProtocol: CLIENT_HTTP2 ? 'HTTP/2 where offered' : 'HTTP/1.1',
    description:
      'one ConfigMap GET and ConfigMap creates, directly to one real cell apiserver and through the router process in front of it, alternating rounds; every request over keep-alive TLS with client certificates',
  },
  figures,
  goals,
  met: {
    getP50Ratio: figures.getP50Ratio <= goals.getP50Ratio,
    getP99Ratio: figures.getP99Ratio <= goals.getP99Ratio,
    throughputRatio: figures.throughputRatio >= goals.throughputRatio,
    routerCpuPerGetOverApiserver: figures.routerCpuPerGetOverApiserver <= goals.routerCpuPerGetOverApiserver,
    getP50OverGoProxy: figures.getP50OverGoProxy <= goals.getP50OverGoProxy,
    cpuPerGetOverGoProxy: figures.cpuPerGetOverGoProxy <= goals.cpuPerGetOverGoProxy,
    apiserverUsPerRoutedGetOverDirect:
      figures.apiserverUsPerRoutedGetOverDirect <= goals.apiserverUsPerRoutedGetOverDirect,
  },
  identityPath,
  bareProxyFigures,
  goProxyFigures,
  cpuCost: {
    ...cpuCost,
    description:
      'CPU time (user + system, /proc) during the GET loads of the pinned run, per GET answered: the router, bare proxy or Go proxy process in its arm; the cell’s kube-apiserver + etcd in the direct arm and in the router’s',
  },
  direct,
  router: routed,
  bareProxy,
  goProxy,
  failures,
};
const errors = Object.fromEntries(
  MODES.map((mode) => [
    mode,
    summary(runs[mode].get).errors + summary(runs[mode].create).errors + fixedRateCellUs[mode].errors,
  ]),
);
if (Object.values(errors).some((count) => count > 0)) {
  progress(`errors: ${JSON.stringify(errors)}; by arm and answer: ${JSON.stringify(failures)}`);
  process.exitCode = 1;
}
writeResult('router', result, { figures, bareProxyFigures, goProxyFigures, identityPath });
