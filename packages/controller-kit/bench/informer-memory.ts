// One measurement of the informer benchmark, in its own process so resident memory is its alone:
// resident memory before and after an informer has synced every ConfigMap of a namespace.
// Usage: informer-memory.ts MODE KUBECONFIG NAMESPACE, MODE = metadata | full | client-node.
import { setTimeout as sleep } from 'node:timers/promises';

import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import { pino } from 'pino';

import { Informer, KubeClient, resourceListWatch } from '../src/index.ts';

const [mode, kubeconfig, namespace] = process.argv.slice(2) as [string, string, string];
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

async function settle(): Promise<NodeJS.MemoryUsage> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await sleep(50);
  }
  return process.memoryUsage();
}

// Load everything the measurement needs before the first reading, so module code is not counted.
const client = KubeClient.fromFile(kubeconfig);
const config = new KubeConfig();
config.loadFromFile(kubeconfig);
const core = config.makeApiClient(CoreV1Api);
const before = await settle();
const started = performance.now();
let objects: number;
let stop: () => void;
if (mode === 'client-node') {
  const informer = makeInformer(config, `/api/v1/namespaces/${namespace}/configmaps`, () =>
    core.listNamespacedConfigMap({ namespace }),
  );
  informer.on('error', (error: unknown) => {
    throw error;
  });
  // start() resolves once the initial list is in its cache (its 'connect' event fires before the list).
  await informer.start();
  objects = informer.list().length;
  stop = () => void informer.stop();
} else {
  const abort = new AbortController();
  const informer = new Informer({
    cell: 'bench',
    resource: 'v1/configmaps',
    listWatch: resourceListWatch(
      client,
      { group: '', version: 'v1', resource: 'configmaps', namespaced: true },
      { namespace, metadataOnly: mode === 'metadata' },
    ),
    logger: pino({ level: 'warn' }),
  });
  void informer.run(abort.signal);
  await informer.waitForSync();
  objects = informer.size;
  stop = () => abort.abort();
}
const syncSeconds = (performance.now() - started) / 1000;
const after = await settle();
process.stdout.write(`${JSON.stringify({ mode, objects, syncSeconds, before, after })}\n`);
stop();
await client.close();
process.exit(0);
