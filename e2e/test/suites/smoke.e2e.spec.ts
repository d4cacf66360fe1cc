import { CELLSET_API_VERSION, parseCellSet } from '@cellfed/api';
import { spawnSync } from 'node:child_process';

import type { V1Deployment } from '@kubernetes/client-node';

import { KubeClient } from '@cellfed/controller-kit';

import {
  CELL_COMPONENTS,
  credentialsNamespace,
  localCellUser,
} from '@cellfed/cells/chart/cell-identities.ts';
import { resolveTools } from '@cellfed/cells/tools.ts';
import { clientsFor, eventually, userMay } from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';

const [group, version] = CELLSET_API_VERSION.split('/') as [string, string];

const deployment = (namespace: string): V1Deployment => ({
  metadata: { name: 'web', namespace, labels: { app: 'web' } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.10' }] },
    },
  },
});

describeE2e('real cells: smoke', () => {
  const env = e2eEnv();
  const namespace = `smoke-${Date.now().toString(36)}`;

  it.each(env.cells.map((cell) => [cell.id, cell] as const))(
    '%s: a namespace and a Deployment are created, read back, and get a ReplicaSet',
    async (_id, cell) => {
      const { core, apps } = clientsFor(cell.kubeconfig);
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      await apps.createNamespacedDeployment({ namespace, body: deployment(namespace) });

      const read = await apps.readNamespacedDeployment({ name: 'web', namespace });
      expect(read.metadata?.uid).toBeTruthy();
      expect(read.spec?.template.spec?.containers[0]?.image).toBe('registry.k8s.io/pause:3.10');
      // kube-controller-manager runs: the Deployment controller creates a ReplicaSet owned by it.
      // Generous: on 2 cores, after suites that load the cells, the controller can be a while behind.
      const replicaSet = await eventually(
        'a ReplicaSet for the Deployment',
        async () => {
          const list = await apps.listNamespacedReplicaSet({ namespace });
          return list.items.find((rs) =>
            rs.metadata?.ownerReferences?.some((owner) => owner.uid === read.metadata?.uid),
          );
        },
        90_000,
      );
      expect(replicaSet.metadata?.name).toMatch(/^web-/);
    },
  );

  it.each([env.controlPlane, ...env.cells].map((apiserver) => [apiserver.id, apiserver] as const))(
    '%s: the kubectl built from e2e/tools lists namespaces with the generated kubeconfig',
    (_id, apiserver) => {
      const { kubectl } = resolveTools(process.env['CELLFED_TOOLS_BIN'], ['kubectl']);
      const result = spawnSync(
        kubectl,
        ['--kubeconfig', apiserver.kubeconfig, 'get', 'namespaces', '-o', 'name'],
        {
          encoding: 'utf8',
        },
      );
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const names = result.stdout.trim().split('\n');
      expect(names).toEqual(expect.arrayContaining(['namespace/default', 'namespace/kube-system']));
      if (apiserver.id !== env.controlPlane.id) expect(names).toContain(`namespace/${namespace}`);
    },
  );

  it('the control plane holds the CellSet "default" listing every cell as Normal, and a kubeconfig Secret per cell and component', async () => {
    const { core, custom } = clientsFor(env.controlPlane.kubeconfig);
    const cellSet = parseCellSet(
      await custom.getClusterCustomObject({ group, version, plural: 'cellsets', name: env.cellSet }),
    );
    expect(cellSet.spec.cells.map((cell) => [cell.id, cell.state, cell.weight])).toEqual(
      env.cells.map((cell) => [cell.id, 'Normal', 1]),
    );
    for (const cell of cellSet.spec.cells) {
      const { name, namespace, key } = cell.kubeconfigSecretRef;
      // No namespace: each component reads the Secret of that name from its own namespace, and calls the
      // cell as an identity of its own.
      expect(namespace).toBeUndefined();
      const users = new Set<string>();
      for (const component of CELL_COMPONENTS) {
        const secret = await core.readNamespacedSecret({ name, namespace: credentialsNamespace(component) });
        const kubeconfig = JSON.parse(Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8'));
        const url = env.cells.find((entry) => entry.id === cell.id)?.url;
        expect(kubeconfig.clusters[0].cluster.server).toBe(url);
        users.add(JSON.stringify(kubeconfig.users[0].user));
      }
      expect(users.size).toBe(CELL_COMPONENTS.length);
    }
  });

  it('each component reads only its own cell credentials, and is someone else in each cell with only its own rights', async () => {
    // As the components are here: the cellfed chart's ServiceAccounts in the control plane, and each
    // component's certificate user in the cells, bound by the cellfed-cell chart.
    const may = async (kubeconfig: string, user: string, attributes: Record<string, string>) => {
      const client = KubeClient.fromFile(kubeconfig);
      try {
        return await userMay(client, user, attributes);
      } finally {
        await client.close();
      }
    };
    const readers: Record<string, string[]> = {};
    for (const reader of CELL_COMPONENTS)
      for (const namespace of [...CELL_COMPONENTS.map(credentialsNamespace), env.secretNamespace])
        if (
          await may(env.controlPlane.kubeconfig, `system:serviceaccount:cellfed-system:cellfed-${reader}`, {
            verb: 'list',
            resource: 'secrets',
            namespace,
          })
        )
          (readers[reader] ??= []).push(namespace);
    expect(readers).toEqual({
      router: ['cellfed-router-cells'],
      'rebalance-controller': ['cellfed-rebalance-controller-cells'],
      'backup-controller': ['cellfed-backup-controller-cells'],
    });
    // Reading one Secret by name: the router and the backup controller only their own; the rebalance
    // controller any (it follows what pod templates name, cluster-wide: docs/security.md says so).
    const getters: Record<string, string[]> = {};
    for (const reader of CELL_COMPONENTS)
      for (const namespace of CELL_COMPONENTS.map(credentialsNamespace))
        if (
          await may(env.controlPlane.kubeconfig, `system:serviceaccount:cellfed-system:cellfed-${reader}`, {
            verb: 'get',
            resource: 'secrets',
            namespace,
            name: 'cell-1-kubeconfig',
          })
        )
          (getters[reader] ??= []).push(namespace);
    expect(getters).toEqual({
      router: ['cellfed-router-cells'],
      'rebalance-controller': CELL_COMPONENTS.map(credentialsNamespace),
      'backup-controller': ['cellfed-backup-controller-cells'],
    });
    // In a cell: only the router impersonates; only the backup controller writes backups; only the
    // rebalance controller writes the cell's admission policies.
    const cell = env.cells[0]!.kubeconfig;
    const rights = async (component: (typeof CELL_COMPONENTS)[number]) => {
      const user = localCellUser(component);
      return {
        impersonate: await may(cell, user, { verb: 'impersonate', resource: 'users' }),
        backups: await may(cell, user, {
          verb: 'create',
          group: 'cells.cellfed.io',
          resource: 'cellbackups',
          namespace: 'cellfed-backups',
        }),
        policies: await may(cell, user, {
          verb: 'update',
          group: 'admissionregistration.k8s.io',
          resource: 'validatingadmissionpolicies',
        }),
      };
    };
    expect(await rights('router')).toEqual({ impersonate: true, backups: false, policies: false });
    // The router impersonates anyone, the controllers too: its identity is still cell-admin in effect.
    expect(
      await may(cell, localCellUser('router'), {
        verb: 'impersonate',
        resource: 'users',
        name: localCellUser('backup-controller'),
      }),
    ).toBe(true);
    expect(await rights('rebalance-controller')).toEqual({
      impersonate: false,
      backups: false,
      policies: true,
    });
    expect(await rights('backup-controller')).toEqual({ impersonate: false, backups: true, policies: false });
  });

  it('the CellSet CRD rejects what the schema rejects: no Normal cell', async () => {
    const { custom } = clientsFor(env.controlPlane.kubeconfig);
    const invalid = {
      apiVersion: CELLSET_API_VERSION,
      kind: 'CellSet',
      metadata: { name: `invalid-${namespace}` },
      spec: { cells: [{ id: 'cell-1', state: 'Joining', kubeconfigSecretRef: { name: 'x' } }] },
    };
    await expect(
      custom.createClusterCustomObject({ group, version, plural: 'cellsets', body: invalid }),
    ).rejects.toMatchObject({
      code: 422,
    });
    expect(() => parseCellSet(invalid)).toThrow(/at least one cell must be Normal/);
  });
});
