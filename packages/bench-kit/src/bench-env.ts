// What the benchmarks share: real cells from the e2e tooling (`cells up`, tools built by
// scripts/build-tools.sh), cellfed's processes in front of them, TLS clients for both, and result files.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Agent } from 'undici';

import { PINNING, canPin, pinToCpu } from './cpu-pinning.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Where the environment puts a component's kubeconfig Secrets of the cells (tools/cells writes one per
 * component, in a namespace of its own, as the chart's `<component>.credentialsNamespace`).
 */
const credentialsNamespace = (component: string) => `cellfed-${component}-cells`;
/** Who a component is in the environment's cells: its certificate's common name. */
const cellUserArg = (component: string) => `--${component}-cell-user=cellfed-${component}`;
export const ROOT = join(HERE, '../../..');

export const progress = (message: string) => process.stderr.write(`${message}\n`);
export const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
export const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
export const median = (values: readonly number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** Writes a benchmark's result to bench/results/NAME.json and its headline figures to stdout. */
export function writeResult(name: string, result: object, headline: unknown): void {
  const out = join(ROOT, 'bench/results', `${name}.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ ...result, calibration: calibration() }, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(headline)}\n`);
}

/**
 * How fast this machine ran a fixed piece of pure JavaScript when the result was written. The shared host's
 * speed varies (2–3× between days has been seen), so absolute figures of runs on different days compare only
 * through it; ratios within one run do not need it.
 */
function calibration(): { loopMs: number; loop: string } {
  const times: number[] = [];
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    let sum = 0;
    for (let i = 0; i < 50_000_000; i++) sum += i % 7;
    if (sum < 0) throw new Error('unreachable: keeps the loop from being optimised away');
    times.push(performance.now() - started);
  }
  return { loopMs: round(Math.min(...times), 1), loop: '50M iterations of sum += i % 7, best of 3' };
}

/** How a run placed its processes on CPUs (written into each result). */
export type Pinning =
  | { pinned: true; apiserversAndEtcdCpu: number; cellfedAndLoadCpu: number; with: string }
  | { pinned: false; reason: string };

export interface EnvFile {
  controlPlane: { id: string; kubeconfig: string; url: string };
  cells: { id: string; kubeconfig: string; url: string }[];
}

/** A control plane and `cells` cells (no controller managers) in a temporary directory, removed by `down`. */
export class BenchEnv {
  readonly dir: string;
  readonly env: EnvFile;
  private readonly children: ChildProcess[] = [];
  private readonly agents: Agent[] = [];
  private readonly tools: string;

  private constructor(dir: string, tools: string, env: EnvFile) {
    this.dir = dir;
    this.tools = tools;
    this.env = env;
    process.once('SIGINT', this.stopOnSignal);
    process.once('SIGTERM', this.stopOnSignal);
  }

  /**
   * A benchmark ended by a signal (Ctrl-C, a timeout) stops what it started before it exits: the cells run
   * detached from it and would outlive it, and so would its own children when only it is signalled.
   */
  private readonly stopOnSignal = (signal: NodeJS.Signals) => {
    for (const child of this.children) child.kill('SIGTERM');
    try {
      runCells(this.dir, this.tools, 'down');
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
  };

  static up(name: string, cells: number): BenchEnv {
    const tools =
      process.env['CELLFED_TOOLS_BIN'] ??
      execFileSync('bash', [join(ROOT, 'scripts/build-tools.sh')], { encoding: 'utf8' }).trim();
    const dir = mkdtempSync(join(tmpdir(), `cellfed-${name}-`));
    progress(`starting the control plane and ${cells} cell(s) in ${dir}`);
    runCells(dir, tools, 'up', '--cells', String(cells), '--no-controller-manager');
    return new BenchEnv(dir, tools, JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8')) as EnvFile);
  }

  /** An undici pool with an apiserver's admin certificate; `trust` names the PKI whose CA to trust. */
  agent(identity: string, trust = identity, options: { http2?: boolean; connections?: number } = {}): Agent {
    const pki = (id: string, file: string) => readFileSync(join(this.dir, 'pki', id, file));
    const agent = new Agent({
      connect: {
        ca: pki(trust, 'ca.crt'),
        cert: pki(identity, 'admin.crt'),
        key: pki(identity, 'admin.key'),
      },
      connections: options.connections ?? 64,
      allowH2: options.http2 ?? false,
    });
    this.agents.push(agent);
    return agent;
  }

  /** A process started for the benchmark, stopped by `down`. */
  own(child: ChildProcess): ChildProcess {
    this.children.push(child);
    return child;
  }

  /**
   * The router as it runs for real (its own process, access log at info, drained as a log shipper would),
   * serving once every cell is engaged; `args` are flags of its own on top (limits a benchmark raises).
   */
  async startRouter(
    args: readonly string[] = [],
  ): Promise<{ url: string; child: ChildProcess; httpPort: number }> {
    const pki = join(this.dir, 'pki', 'control-plane');
    let port: number | undefined;
    let httpPort: number | undefined;
    const engaged = new Set<string>();
    const child = await this.startApp(
      'the router',
      [
        // e.g. `--cpu-prof --cpu-prof-dir=/tmp/router-profile` to see where the router spends its time.
        ...(process.env['CELLFED_BENCH_ROUTER_NODE_OPTIONS'] ?? '').split(' ').filter(Boolean),
        join(ROOT, 'packages/cell-router/src/main.ts'),
        ...['--kubeconfig', this.env.controlPlane.kubeconfig, '--host', '127.0.0.1', '--port', '0'],
        ...[
          '--credentials-namespace',
          credentialsNamespace('router'),
          ...['router', 'rebalance-controller', 'backup-controller'].map(cellUserArg),
          '--http-port',
          '0',
          '--log-level',
          'info',
        ],
        ...['--tls-cert-file', join(pki, 'apiserver.crt'), '--tls-key-file', join(pki, 'apiserver.key')],
        ...['--client-ca-file', join(pki, 'ca.crt')],
        ...args,
      ],
      (entry) => {
        if (entry.msg === 'serving the Kubernetes API') port = entry.port as number;
        if (entry.httpPort !== undefined) httpPort = entry.httpPort as number;
        if (entry.msg === 'cell engaged') engaged.add(String(entry.cell));
        return port !== undefined && httpPort !== undefined && engaged.size === this.env.cells.length;
      },
    );
    return { url: `https://127.0.0.1:${port}`, child, httpPort: httpPort! };
  }

  /** One of cellfed's controllers as it runs for real (`package` names it), started once `cells` are engaged. */
  async startController(
    name: 'rebalance-controller' | 'backup-controller',
    args: string[] = [],
    cells = this.env.cells.map((cell) => cell.id),
  ): Promise<{ httpPort: number; child: ChildProcess }> {
    let httpPort: number | undefined;
    const engaged = new Set<string>();
    const child = await this.startApp(
      `the ${name.replace('-', ' ')}`,
      [
        // e.g. `--cpu-prof --cpu-prof-dir=/tmp/controller-profile`, as for the router.
        ...(process.env['CELLFED_BENCH_CONTROLLER_NODE_OPTIONS'] ?? '').split(' ').filter(Boolean),
        join(ROOT, `packages/${name}/src/main.ts`),
        ...['--kubeconfig', this.env.controlPlane.kubeconfig, '--http-port', '0', '--leader-elect', 'false'],
        ...['--credentials-namespace', credentialsNamespace(name)],
        // The router and the backup controller are someone else in the cells (their certificates' names).
        ...(name === 'rebalance-controller' ? ['router', 'backup-controller'].map(cellUserArg) : []),
        ...args,
      ],
      (entry) => {
        if (entry.httpPort !== undefined) httpPort = entry.httpPort as number;
        if (entry.msg === 'cell engaged') engaged.add(String(entry.cell));
        return httpPort !== undefined && cells.every((cell) => engaged.has(cell));
      },
    );
    return { httpPort: httpPort!, child };
  }

  /** The process ids of the kube-apiserver and etcd of apiserver `id` (a cell, or `control-plane`). */
  daemonPids(id: string): number[] {
    const state = JSON.parse(readFileSync(join(this.dir, 'local-state.json'), 'utf8')) as {
      apiservers: Record<string, { daemons: Record<string, { pid: number } | undefined> }>;
    };
    return ['kube-apiserver', 'etcd'].map((component) => {
      const pid = state.apiservers[id]?.daemons[component]?.pid;
      if (pid === undefined) throw new Error(`no ${component} of ${id} in ${this.dir}`);
      return pid;
    });
  }

  /**
   * Pins every apiserver and etcd (control plane and cells) to one CPU, and this process (the load) and
   * `cellfed` (the processes under test) to the other ({@link PINNING}); answers what was done, for the
   * result. Call it once every process of the run has started, before the first measured round.
   */
  pinForComparison(cellfed: readonly ChildProcess[]): Pinning {
    if (!canPin()) return { pinned: false, reason: `${cpus().length} CPU(s) or CELLFED_BENCH_PIN=false` };
    for (const id of [this.env.controlPlane.id, ...this.env.cells.map((cell) => cell.id)])
      for (const pid of this.daemonPids(id)) pinToCpu(pid, PINNING.apiserversAndEtcd);
    for (const pid of [process.pid, ...cellfed.map((child) => child.pid!)])
      pinToCpu(pid, PINNING.cellfedAndLoad);
    return {
      pinned: true,
      apiserversAndEtcdCpu: PINNING.apiserversAndEtcd,
      cellfedAndLoadCpu: PINNING.cellfedAndLoad,
      with: 'taskset --all-tasks',
    };
  }

  /** Kills a cell's etcd and kube-apiserver at once (SIGKILL to each process group): the cell is lost. */
  killCell(id: string): void {
    for (const pid of this.daemonPids(id)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Starts `node args…` and resolves once `started` says so of a log line; later lines are drained. */
  private async startApp(
    what: string,
    args: string[],
    started: (entry: Record<string, unknown>) => boolean,
  ): Promise<ChildProcess> {
    const child = this.own(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] }));
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      const timeout = setTimeout(() => reject(new Error(`${what} was not up within 30 s`)), 30_000);
      child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
      lines.on('line', (line) => {
        if (started(JSON.parse(line) as Record<string, unknown>)) {
          clearTimeout(timeout);
          resolve();
        }
      });
    });
    lines.removeAllListeners('line');
    // CELLFED_BENCH_LOG_DIR keeps each process's log lines, to see afterwards where the time went.
    const logDir = process.env['CELLFED_BENCH_LOG_DIR'];
    const log = logDir ? createWriteStream(join(logDir, `${what.replace(/\W+/g, '-')}.log`)) : undefined;
    lines.on('line', (line) => log?.write(`${line}\n`));
    return child;
  }

  /** Stops every process and pool it started, the cells, and removes the directory. */
  async down(): Promise<void> {
    process.off('SIGINT', this.stopOnSignal);
    process.off('SIGTERM', this.stopOnSignal);
    await Promise.all(this.agents.map((agent) => agent.close()));
    // A child that has exited has an exit code, or the signal that ended it: either way no 'exit' is to come.
    for (const child of this.children.filter((one) => one.exitCode === null && one.signalCode === null)) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    try {
      runCells(this.dir, this.tools, 'down');
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

function runCells(dir: string, tools: string, ...args: string[]): void {
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'tools/cells/src/cli/cells.ts'),
      ...args,
      '--dir',
      dir,
      '--tools',
      tools,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
}
