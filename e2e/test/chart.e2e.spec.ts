import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import { KubeClient, type KubeList } from '@cellfed/controller-kit';

import { CHART_DIR } from '../src/chart/helm-chart.ts';
import { describeE2e, e2eEnv } from './e2e-env.ts';

// `helm install` of the chart into the router control plane, as an operator would. The pods cannot start
// here (a control plane of processes has no nodes; the kind provider is where they run): this proves the
// chart installs every resource into a real apiserver, which validates each one, and uninstalls cleanly.
describeE2e('the cellfed chart in a real control plane', () => {
  const env = e2eEnv();
  const helm = join(process.env['CELLFED_TOOLS_BIN'] ?? '', 'helm');
  const release = `chart-${Date.now()}`;
  const namespace = release;
  const controlPlane = KubeClient.fromFile(env.controlPlane.kubeconfig);
  const run = (...args: string[]) =>
    execFileSync(helm, [...args, '--kubeconfig', env.controlPlane.kubeconfig], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const names = async (path: string) =>
    (
      await controlPlane.request<KubeList>('GET', path, {
        query: { labelSelector: `app.kubernetes.io/instance=${release}` },
      })
    ).items
      .map((item) => item.metadata.name)
      .sort();

  afterAll(async () => {
    try {
      run('uninstall', release, '--namespace', namespace);
    } catch {
      // already uninstalled by the test
    }
    await controlPlane.request('DELETE', `/api/v1/namespaces/${namespace}`).catch(() => undefined);
    await controlPlane.close();
  });

  it('helm install creates every resource, and helm uninstall removes them', async () => {
    run(
      ...['install', release, CHART_DIR, '--namespace', namespace, '--create-namespace'],
      ...['--set', `global.cellSet=${release}`, '--set', 'metrics.grafanaDashboard.enabled=true'],
    );
    const deployments = ['router', 'rebalance-controller', 'backup-controller'].map(
      (c) => `${release}-cellfed-${c}`,
    );
    expect(await names(`/apis/apps/v1/namespaces/${namespace}/deployments`)).toEqual([...deployments].sort());
    expect(await names(`/api/v1/namespaces/${namespace}/serviceaccounts`)).toEqual([...deployments].sort());
    expect(await names(`/api/v1/namespaces/${namespace}/services`)).toHaveLength(4);
    expect(await names(`/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`)).toHaveLength(3);
    expect(await names(`/api/v1/namespaces/${namespace}/configmaps`)).toEqual([
      `${release}-cellfed-dashboard`,
    ]);
    expect(await names('/apis/rbac.authorization.k8s.io/v1/clusterroles')).toEqual([...deployments].sort());
    expect(await names('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings')).toEqual(
      [...deployments].sort(),
    );
    // Events about the CellSet land in `default`; each component may write them there.
    expect(await names('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings')).toEqual(
      deployments.map((name) => `${name}-events`).sort(),
    );
    const router = await controlPlane.request<{
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    }>('GET', `/apis/apps/v1/namespaces/${namespace}/deployments/${release}-cellfed-router`);
    expect(router.spec.template.spec.containers[0]!.args).toContain(`--cellset=${release}`);
    expect(run('status', release, '--namespace', namespace)).toContain('STATUS: deployed');

    run('uninstall', release, '--namespace', namespace);
    expect(await names('/apis/rbac.authorization.k8s.io/v1/clusterroles')).toEqual([]);
    expect(await names(`/apis/apps/v1/namespaces/${namespace}/deployments`)).toEqual([]);
  });
});
