import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import type { KubeClient } from '@cellfed/controller-kit';
import { type KubeList } from '@cellfed/federation';

import { eventually } from '../helpers/clients.ts';
import { DEPLOYMENTS } from '../helpers/deployments.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import {
  joinFixture,
  joinThirdCell,
  pickName,
  plainNamespaceOf,
  startJoinFederation,
  stopJoinFederation,
} from '../helpers/join-fixture.ts';
import type { RebalancedFederation } from '../helpers/scratch-federation.ts';

const run = promisify(execFile);
/** A public chart, vendored as published (e2e/fixtures/README.md). */
const CHART = fileURLToPath(new URL('../../fixtures/charts/metrics-server', import.meta.url));
/** No APIService: it would register metrics.k8s.io with the control plane for every suite after this one. */
const VALUES = ['--set', 'apiService.create=false'];

/**
 * helm 4 with a real public chart, through the router while a cell joins, and on one plain apiserver: the
 * same commands give the same answers, and the release's objects are where each apiserver keeps them.
 */
describeE2e('a public chart with helm through the router, as on one apiserver', () => {
  const env = e2eEnv();
  const cellSetName = `chart-${Date.now()}`;
  const fixture = joinFixture(env);
  const { three, after, plain } = fixture;
  // The release's Deployment and Service (named after the release) move into the joining cell.
  const namespace = pickName(
    `chart-${Date.now()}`,
    (ns) => after.route(after.keyOf({ namespace: ns, name: 'ms-routed' })).newCell === three,
  );
  const plainNamespace = plainNamespaceOf(namespace);
  // Its ClusterRoles are cluster-wide, in the control plane for both, one of them named by the chart's name
  // alone: each install its own release name and name.
  const releaseIn = (ns: string) => (ns === plainNamespace ? 'ms-plain' : 'ms-routed');
  const valuesIn = (ns: string) => [...VALUES, '--set', `nameOverride=${releaseIn(ns)}`];
  let started: RebalancedFederation | undefined;
  let routed: KubeClient;

  /** helm through the router, or on the plain apiserver for the plain namespace. */
  const helm = async (ns: string, ...args: string[]) => {
    const kubeconfig =
      ns === plainNamespace ? env.controlPlane.kubeconfig : join(env.dir, `${cellSetName}.kubeconfig`);
    try {
      const { stdout } = await run(join(process.env['CELLFED_TOOLS_BIN']!, 'helm'), [
        ...args,
        '--namespace',
        ns,
        '--kubeconfig',
        kubeconfig,
      ]);
      return stdout;
    } catch (error) {
      const failed = error as { stderr?: string; message: string };
      throw new Error(`helm ${args.join(' ')} (${ns}): ${failed.stderr ?? failed.message}`, { cause: error });
    }
  };
  /** What a release is, without what differs by namespace and time. */
  const comparable = (text: string, ns: string) =>
    text
      .replaceAll(ns, 'NAMESPACE')
      .replaceAll(releaseIn(ns), 'RELEASE')
      .replace(/LAST DEPLOYED: .*/g, 'LAST DEPLOYED: -')
      .replace(/^\s*(updated|first_deployed|last_deployed): .*$/gm, '');
  const deploymentOf = async (client: KubeClient, ns: string) =>
    (await client.request<KubeList>('GET', `${DEPLOYMENTS}/namespaces/${ns}/deployments`)).items.map(
      (item) => ({
        name: item.metadata.name?.replace(releaseIn(ns), 'RELEASE'),
        replicas: (item as { spec?: { replicas?: number } }).spec?.replicas,
        release: item.metadata.annotations?.['meta.helm.sh/release-name']?.replace(releaseIn(ns), 'RELEASE'),
      }),
    );

  beforeAll(async () => {
    started = await startJoinFederation(env, fixture, { cellSetName, namespace });
    routed = started.federation.routed;
  });

  afterAll(async () => {
    // A failed run leaves its cluster-wide objects behind otherwise.
    for (const ns of [namespace, plainNamespace])
      await helm(ns, 'uninstall', releaseIn(ns)).catch(() => undefined);
    await stopJoinFederation(env, fixture, started, { cellSetName, namespace });
  });

  it('install, upgrade across a join, status, manifest and uninstall answer as on one apiserver', async () => {
    for (const ns of [namespace, plainNamespace])
      await helm(ns, 'install', releaseIn(ns), CHART, ...valuesIn(ns));
    const manifest = await helm(namespace, 'get', 'manifest', releaseIn(namespace));
    expect(comparable(manifest, namespace)).toBe(
      comparable(await helm(plainNamespace, 'get', 'manifest', releaseIn(plainNamespace)), plainNamespace),
    );
    expect(await deploymentOf(routed, namespace)).toEqual(await deploymentOf(plain, plainNamespace));

    await joinThirdCell(env, fixture, cellSetName);
    expect(await deploymentOf(fixture.cells.get(three)!, namespace)).toHaveLength(1);
    // Moved, and upgraded as it was installed: server-side apply by helm, a field it owns changing.
    for (const ns of [namespace, plainNamespace])
      await helm(ns, 'upgrade', releaseIn(ns), CHART, ...valuesIn(ns), '--set', 'replicas=2');
    const status = await helm(namespace, 'status', releaseIn(namespace));
    expect(status).toContain('STATUS: deployed');
    expect(status).toContain('REVISION: 2');
    // Its summary and the kinds of what it made; the tables under them hold generated names, IPs and ages.
    const summary = (text: string, ns: string) =>
      comparable(text, ns)
        .split('\n')
        .filter((line) => /^(NAME|NAMESPACE|STATUS|REVISION):|^==> /.test(line))
        .sort();
    expect(summary(status, namespace)).toEqual(
      summary(await helm(plainNamespace, 'status', releaseIn(plainNamespace)), plainNamespace),
    );
    const history = (ns: string) => helm(ns, 'history', releaseIn(ns), '-o', 'json');
    expect(JSON.parse(await history(namespace)).map((entry: { status: string }) => entry.status)).toEqual(
      JSON.parse(await history(plainNamespace)).map((entry: { status: string }) => entry.status),
    );
    expect(await deploymentOf(routed, namespace)).toEqual([
      { name: 'RELEASE', replicas: 2, release: 'RELEASE' },
    ]);
    expect(await deploymentOf(routed, namespace)).toEqual(await deploymentOf(plain, plainNamespace));

    for (const ns of [namespace, plainNamespace]) await helm(ns, 'uninstall', releaseIn(ns), '--wait');
    await eventually(
      'the release’s Deployment to be gone from every cell',
      async () => {
        for (const client of fixture.cells.values())
          if ((await deploymentOf(client, namespace)).length > 0) return undefined;
        return true;
      },
      60_000,
    );
    expect(await deploymentOf(routed, namespace)).toEqual([]);
    expect(await helm(namespace, 'list', '-q')).toBe('');
    expect(await helm(plainNamespace, 'list', '-q')).toBe('');
  });
});
