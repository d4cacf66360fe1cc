import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One spec's outcome in a run of Kubernetes' e2e.test, from ginkgo's JSON report. */
export interface SpecOutcome {
  /** `passed`, `failed`, `timedout`, `panicked`, `interrupted`, `skipped`, … as ginkgo names them. */
  readonly state: string;
  readonly seconds: number;
  /** The failure's message, first lines only. */
  readonly failure?: string;
}

export interface GinkgoRunOptions {
  /** Where build-conformance.sh put e2e.test and ginkgo. */
  readonly bin: string;
  readonly kubeconfig: string;
  /** Full spec names (`[sig-api-machinery] Watchers should …`): exactly these run. */
  readonly specs: readonly string[];
  /** Directory for the JSON report and the run's output. */
  readonly outputDir: string;
  readonly label: string;
  readonly procs: number;
  /** The whole run's limit (ginkgo's --timeout): a spec that hangs is reported, not waited on forever. */
  readonly timeoutMinutes: number;
  /** Progress, one line at a time (specs done so far). */
  readonly progress: (line: string) => void;
}

/** The suite's description (e2e/tools/conformance/conformance_test.go): ginkgo's --focus sees it first. */
const SUITE = 'cellfed conformance';

/** A regular expression that matches exactly one spec's full name (ginkgo's --focus takes them). */
function exactly(name: string): string {
  return `^${`${SUITE} ${name}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}

/**
 * Runs the named specs of e2e.test against one apiserver (or the router) with ginkgo's parallel runner and
 * reads back every spec's outcome by name. Kubernetes' e2e framework reads its cluster from `kubeconfig`;
 * `skeleton` is its provider for a cluster it knows nothing about.
 */
export async function runGinkgo(options: GinkgoRunOptions): Promise<Map<string, SpecOutcome>> {
  const report = join(options.outputDir, `${options.label}.json`);
  const args = [
    `--procs=${options.procs}`,
    `--timeout=${options.timeoutMinutes}m`,
    '--no-color',
    '--silence-skips',
    `--output-dir=${options.outputDir}`,
    `--json-report=${options.label}.json`,
    ...options.specs.map((spec) => `--focus=${exactly(spec)}`),
    join(options.bin, 'e2e.test'),
    '--',
    `--kubeconfig=${options.kubeconfig}`,
    '--provider=skeleton',
    // The framework's own dump of a failed spec's namespace: the report has the failure, the log the rest.
    '--dump-logs-on-failure=false',
  ];
  const log = join(options.outputDir, `${options.label}.log`);
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(join(options.bin, 'ginkgo'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = createWriteStream(log);
    let done = 0;
    const onData = (chunk: Buffer) => {
      output.write(chunk);
      // ginkgo prints one • per passed spec and a block per failed one: enough to show it is moving.
      const before = done;
      done += (chunk.toString().match(/•|\[FAIL\]|\[TIMEDOUT\]/g) ?? []).length;
      if (Math.floor(done / 20) > Math.floor(before / 20))
        options.progress(
          `${options.label}: ${done} of ${options.specs.length} specs done, ${Math.round((Date.now() - started) / 1000)} s`,
        );
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', () => output.end(resolve));
  });
  if (!existsSync(report))
    throw new Error(`${options.label}: ginkgo wrote no report (${report}); its output is in ${log}`);
  return outcomes(JSON.parse(readFileSync(report, 'utf8')) as GinkgoReport[]);
}

interface GinkgoReport {
  readonly SpecReports?: {
    readonly ContainerHierarchyTexts?: string[] | null;
    readonly LeafNodeText?: string;
    readonly LeafNodeType?: string;
    readonly State?: string;
    readonly RunTime?: number;
    readonly Failure?: { readonly Message?: string };
  }[];
}

/** The outcome of every spec that ran, from ginkgo's JSON report, by full name (set-up nodes left out). */
function outcomes(reports: readonly GinkgoReport[]): Map<string, SpecOutcome> {
  const byName = new Map<string, SpecOutcome>();
  for (const report of reports) {
    for (const spec of report.SpecReports ?? []) {
      // Skipped: not focused, or not reached before the run's limit. Only what ran has an outcome.
      if (spec.LeafNodeType !== 'It' || spec.State === 'skipped') continue;
      const name = [...(spec.ContainerHierarchyTexts ?? []), spec.LeafNodeText ?? '']
        .filter((text) => text !== '')
        .join(' ');
      const failure = spec.Failure?.Message?.split('\n').slice(0, 6).join('\n');
      byName.set(name, {
        state: spec.State ?? 'unknown',
        seconds: Math.round((spec.RunTime ?? 0) / 1e7) / 100,
        ...(failure ? { failure } : {}),
      });
    }
  }
  return byName;
}

/** A spec that failed its first run and passed its second, with what its first run said. */
export interface SecondRunPass {
  readonly spec: string;
  readonly first: string;
  readonly failure?: string;
}

/**
 * Runs once more, in the same arm, those of `specs` that ran in `first` and did not pass (as ginkgo's
 * --flake-attempts would); answers every spec's outcome, the second run's where there was one, and those
 * that passed only the second time. A spec `first` does not have (not reached) is not run again.
 */
export async function rerunFailed(
  options: Omit<GinkgoRunOptions, 'specs'>,
  first: ReadonlyMap<string, SpecOutcome>,
  specs: readonly string[],
  run: (options: GinkgoRunOptions) => Promise<Map<string, SpecOutcome>> = runGinkgo,
): Promise<{ outcomes: Map<string, SpecOutcome>; flaky: SecondRunPass[] }> {
  const failed = specs.filter((spec) => first.has(spec) && first.get(spec)?.state !== 'passed');
  if (failed.length === 0) return { outcomes: new Map(first), flaky: [] };
  const second = await run({ ...options, specs: failed, procs: Math.min(options.procs, failed.length) });
  const flaky = failed
    .filter((spec) => second.get(spec)?.state === 'passed')
    .map((spec) => {
      const outcome = first.get(spec);
      return {
        spec,
        first: outcome?.state ?? 'not run',
        ...(outcome?.failure ? { failure: outcome.failure } : {}),
      };
    });
  return { outcomes: new Map([...first, ...second]), flaky };
}
