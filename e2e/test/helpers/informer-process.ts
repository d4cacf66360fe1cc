import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** One object of the informer's cache, as e2e/tools/informer prints it. */
interface CachedObject {
  namespace: string;
  name: string;
  uid: string;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** What the informer program answers: its cache and what its event handlers were told. */
export interface InformerReport {
  synced: boolean;
  objects: CachedObject[];
  adds: number;
  updates: number;
  deletes: number;
  /** Updates whose new object had another uid than the cached one. */
  uidChanges: number;
  /** Keys deleted and later added again. */
  readded: number;
  /** Answers to its lists and watches by content type: `list <type>`, `watch <type>`. */
  answers: Record<string, number>;
}

export interface InformerOptions {
  /** group/version/resource; Deployments by default. */
  resource?: string;
  /** A typed informer accepting `application/vnd.kubernetes.protobuf` alone (dynamic and JSON otherwise). */
  protobuf?: boolean;
  /** LIST then WATCH, as client-go before streaming lists (WatchListClient off); a streaming list otherwise. */
  listFirst?: boolean;
}

/**
 * The suite's client-go program (e2e/tools/informer, built with the tools): a shared informer of one
 * resource through `kubeconfig`, asked for its state line by line.
 */
export class InformerProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: ((line: string) => void)[] = [];
  private stderr = '';

  constructor(kubeconfig: string, namespace: string, options: InformerOptions = {}) {
    this.child = spawn(
      join(process.env['CELLFED_TOOLS_BIN']!, 'informer'),
      [
        '--kubeconfig',
        kubeconfig,
        '--namespace',
        namespace,
        '--resource',
        options.resource ?? 'apps/v1/deployments',
        ...(options.protobuf ? ['--protobuf'] : []),
      ],
      // client-go reads its feature gates from the environment (KUBE_FEATURE_<gate>).
      options.listFirst ? { env: { ...process.env, KUBE_FEATURE_WatchListClient: 'false' } } : {},
    );
    this.child.stderr.on(
      'data',
      (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-4000)),
    );
    createInterface({ input: this.child.stdout }).on('line', (line) => this.answers.shift()?.(line));
  }

  /** Its cache and counts now. */
  report(): Promise<InformerReport> {
    if (this.child.exitCode !== null)
      return Promise.reject(new Error(`the informer exited with ${this.child.exitCode}: ${this.stderr}`));
    return new Promise((resolve) => {
      this.answers.push((line) => resolve(JSON.parse(line) as InformerReport));
      this.child.stdin.write('\n');
    });
  }

  /** What it logged (client-go's warnings and errors), for a failure's message. */
  log(): string {
    return this.stderr;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await exited;
  }
}
