import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import { KubeClient } from '@cellfed/controller-kit';

import { CELL_CHART_DIR, CHART_DIR } from '@cellfed/cells/chart/helm-chart.ts';
import { type KubeList } from '@cellfed/federation';

import { userMay } from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';

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
    const components = ['router', 'rebalance-controller', 'backup-controller'].map(
      (c) => `${release}-cellfed-${c}`,
    );
    // kube-controller-manager's quota controller, counting through the router.
    const quotaController = `${release}-cellfed-quota-controller`;
    const deployments = [...components, quotaController];
    expect(await names(`/apis/apps/v1/namespaces/${namespace}/deployments`)).toEqual([...deployments].sort());
    expect(await names(`/api/v1/namespaces/${namespace}/serviceaccounts`)).toEqual([...deployments].sort());
    expect(await names(`/api/v1/namespaces/${namespace}/services`)).toHaveLength(4);
    expect(await names(`/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`)).toHaveLength(4);
    expect(await names(`/api/v1/namespaces/${namespace}/configmaps`)).toEqual(
      [`${release}-cellfed-dashboard`, quotaController].sort(),
    );
    // Its status writes held until a quota is divided.
    const policies = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
    expect(await names(policies)).toEqual([quotaController]);
    expect(await names('/apis/rbac.authorization.k8s.io/v1/clusterroles')).toEqual([...deployments].sort());
    expect(await names('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings')).toEqual(
      [...deployments].sort(),
    );
    // Events about the CellSet land in `default`; each of cellfed's own components may write them there.
    expect(await names('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings')).toEqual(
      components.map((name) => `${name}-events`).sort(),
    );
    const router = await controlPlane.request<{
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    }>('GET', `/apis/apps/v1/namespaces/${namespace}/deployments/${release}-cellfed-router`);
    expect(router.spec.template.spec.containers[0]!.args).toContain(`--cellset=${release}`);
    expect(run('status', release, '--namespace', namespace)).toContain('STATUS: deployed');

    run('uninstall', release, '--namespace', namespace);
    expect(await names('/apis/rbac.authorization.k8s.io/v1/clusterroles')).toEqual([]);
    expect(await names(`/apis/apps/v1/namespaces/${namespace}/deployments`)).toEqual([]);
    expect(await names(policies)).toEqual([]);
  });
});

// The cell chart installed into a real cell, then the cell's own authorizer asked (SubjectAccessReview)
// what each component's identity may do there: what the components do in cells, and not more.
describeE2e('the cellfed-cell chart in a real cell', () => {
  const env = e2eEnv();
  const helm = join(process.env['CELLFED_TOOLS_BIN'] ?? '', 'helm');
  const cell = env.cells[0]!;
  const client = KubeClient.fromFile(cell.kubeconfig);
  const release = `cell-chart-${Date.now()}`;
  const run = (...args: string[]) =>
    execFileSync(helm, [...args, '--kubeconfig', cell.kubeconfig], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const may = (
    user: string,
    verb: string,
    group: string,
    resource: string,
    namespace = '',
    subresource = '',
  ) => userMay(client, user, { verb, group, resource, namespace, subresource });

  afterAll(async () => {
    try {
      run('uninstall', release);
    } catch {
      // not installed
    }
    await client.close();
  });

  it('grants each component what it does in a cell, and nothing it does not', async () => {
    run(
      ...['install', release, CELL_CHART_DIR],
      ...['--set', 'router.subjects[0].kind=User', '--set', 'router.subjects[0].name=e2e-router'],
      ...[
        '--set',
        'rebalanceController.subjects[0].kind=User',
        '--set',
        'rebalanceController.subjects[0].name=e2e-rebalance',
      ],
      ...[
        '--set',
        'backupController.subjects[0].kind=User',
        '--set',
        'backupController.subjects[0].name=e2e-backup',
      ],
    );
    // The router: impersonation, namespaces, backups read (and marked); never a write of its own to a workload.
    expect(await may('e2e-router', 'impersonate', '', 'users')).toBe(true);
    // Any extra a caller carries: a client certificate's credential-id, which every kubectl of a kind
    // cluster sends (RBAC's "userextras/*" would match no key).
    for (const extra of ['authentication.kubernetes.io/credential-id', 'scopes'])
      expect(await may('e2e-router', 'impersonate', 'authentication.k8s.io', 'userextras', '', extra)).toBe(
        true,
      );
    expect(await may('e2e-router', 'create', '', 'namespaces')).toBe(true);
    expect(await may('e2e-router', 'get', 'cells.cellfed.io', 'cellbackups', 'cellfed-backups')).toBe(true);
    // It marks the backup of a key a writer waits on, to be promoted first (docs/failover.md); never deletes one.
    expect(await may('e2e-router', 'patch', 'cells.cellfed.io', 'cellbackups', 'cellfed-backups')).toBe(true);
    expect(await may('e2e-router', 'delete', 'cells.cellfed.io', 'cellbackups', 'cellfed-backups')).toBe(
      false,
    );
    expect(await may('e2e-router', 'create', 'apps', 'deployments', 'shop')).toBe(false);
    // It follows the metadata of what the cells' controllers make, for one watch order (docs/routing.md).
    expect(await may('e2e-router', 'watch', '', 'pods', 'shop')).toBe(true);
    expect(await may('e2e-router', 'get', '', 'pods', 'shop')).toBe(false);
    // The rebalance controller: moves workloads and their status, mirrors CRDs, keeps the follower copies of
    // the ConfigMaps and Secrets pod templates name (never watches Secrets, never patches them).
    expect(await may('e2e-rebalance', 'delete', 'apps', 'deployments', 'shop')).toBe(true);
    expect(await may('e2e-rebalance', 'update', 'apps', 'deployments/status', 'shop')).toBe(true);
    expect(await may('e2e-rebalance', 'create', 'apiextensions.k8s.io', 'customresourcedefinitions')).toBe(
      true,
    );
    expect(await may('e2e-rebalance', 'create', '', 'secrets', 'shop')).toBe(true);
    expect(await may('e2e-rebalance', 'watch', '', 'secrets', 'shop')).toBe(false);
    expect(await may('e2e-rebalance', 'patch', '', 'secrets', 'shop')).toBe(false);
    // It lists backups (a rebalance ends only once no Down cell's backup waits), and never touches one.
    expect(await may('e2e-rebalance', 'list', 'cells.cellfed.io', 'cellbackups', 'cellfed-backups')).toBe(
      true,
    );
    expect(await may('e2e-rebalance', 'get', 'cells.cellfed.io', 'cellbackups', 'cellfed-backups')).toBe(
      false,
    );
    expect(await may('e2e-rebalance', 'delete', 'cells.cellfed.io', 'cellbackups', 'cellfed-backups')).toBe(
      false,
    );
    // The backup controller: backups, promotion (create, or replace a follower copy; then the commit, a
    // patch), purge (delete); nothing beyond the cellular resources, and never anyone's identity.
    expect(await may('e2e-backup', 'patch', 'cells.cellfed.io', 'cellbackups', 'cellfed-backups')).toBe(true);
    expect(await may('e2e-backup', 'create', '', 'configmaps', 'shop')).toBe(true);
    expect(await may('e2e-backup', 'update', '', 'configmaps', 'shop')).toBe(true);
    expect(await may('e2e-backup', 'patch', 'apps', 'deployments', 'shop')).toBe(true);
    expect(await may('e2e-backup', 'patch', '', 'secrets', 'shop')).toBe(false);
    expect(await may('e2e-backup', 'update', 'apps', 'deployments/status', 'shop')).toBe(false);
    expect(await may('e2e-backup', 'impersonate', '', 'users')).toBe(false);
  });
});
