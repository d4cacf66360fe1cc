import {
  kindClusterConfig,
  kindClusterName,
  planChartInstall,
  planKindDown,
  planKindUp,
} from './kind-plan.ts';

describe('planKindUp', () => {
  const plans = planKindUp({
    dir: '/envs/a',
    ids: ['control-plane', 'cell-1', 'cell-2'],
    controlPlaneId: 'control-plane',
    images: ['cellfed/cell-router:dev', 'cellfed/rebalance-controller:dev'],
  });

  it('plans one cluster per cell plus the control plane, each with its own kubeconfigs', () => {
    expect(plans.map((plan) => plan.clusterName)).toEqual([
      'cellfed-control-plane',
      'cellfed-cell-1',
      'cellfed-cell-2',
    ]);
    expect(plans[1]).toMatchObject({
      configFile: '/envs/a/kind/cell-1.json',
      kubeconfig: '/envs/a/kubeconfig/cell-1.kubeconfig',
      internalKubeconfig: '/envs/a/kubeconfig/cell-1.internal.kubeconfig',
    });
  });

  it('creates, then loads the images into the control plane only, then exports the internal kubeconfig', () => {
    const [controlPlane, cell] = plans;
    expect(controlPlane!.create.map((command) => [command.command, ...command.args].join(' '))).toEqual([
      'kind create cluster --name cellfed-control-plane --config /envs/a/kind/control-plane.json --kubeconfig /envs/a/kubeconfig/control-plane.kubeconfig --wait 180s',
      'kind load docker-image cellfed/cell-router:dev cellfed/rebalance-controller:dev --name cellfed-control-plane',
      'kind get kubeconfig --internal --name cellfed-control-plane',
    ]);
    expect(controlPlane!.create.at(-1)!.stdoutFile).toBe(
      '/envs/a/kubeconfig/control-plane.internal.kubeconfig',
    );
    expect(cell!.create.some((command) => command.args[0] === 'load')).toBe(false);
  });

  it('deletes exactly the clusters it is given', () => {
    expect(planKindDown(['cellfed-cell-1']).map((command) => command.args)).toEqual([
      ['delete', 'cluster', '--name', 'cellfed-cell-1'],
    ]);
  });
});

describe('kindClusterConfig', () => {
  it('publishes the apiserver on a free loopback port, allocates from the cell’s own service range and pins the node image only when asked', () => {
    expect(kindClusterConfig('cell-1')).toEqual({
      kind: 'Cluster',
      apiVersion: 'kind.x-k8s.io/v1alpha4',
      name: kindClusterName('cell-1'),
      networking: { apiServerAddress: '127.0.0.1', apiServerPort: 0, serviceSubnet: '10.97.0.0/16' },
      nodes: [{ role: 'control-plane' }],
    });
    expect(kindClusterConfig('cell-1', { nodeImage: 'kindest/node:v1.37.2' }).nodes[0]).toEqual({
      role: 'control-plane',
      image: 'kindest/node:v1.37.2',
    });
  });

  it('turns the control plane’s quota controller off through kubeadm’s config, keeping kubeadm’s own controllers', () => {
    expect(kindClusterConfig('control-plane', { disabledControllers: ['resourcequota'] })).toMatchObject({
      kubeadmConfigPatchesJSON6902: [
        {
          group: 'kubeadm.k8s.io',
          version: 'v1beta4',
          kind: 'ClusterConfiguration',
          patch: JSON.stringify([
            {
              op: 'add',
              path: '/controllerManager/extraArgs/-',
              value: { name: 'controllers', value: '*,bootstrapsigner,tokencleaner,-resourcequota' },
            },
          ]),
        },
      ],
    });
    expect(kindClusterConfig('cell-1')).not.toHaveProperty('kubeadmConfigPatchesJSON6902');
  });

  it('publishes the router’s node port on the loopback port it is given', () => {
    expect(kindClusterConfig('control-plane', { routerHostPort: 41234 }).nodes[0]).toEqual({
      role: 'control-plane',
      extraPortMappings: [{ containerPort: 30443, hostPort: 41234, listenAddress: '127.0.0.1' }],
    });
  });
});

describe('planChartInstall', () => {
  const plan = planChartInstall({
    kubeconfig: '/envs/a/kubeconfig/control-plane.kubeconfig',
    chartDir: '/repo/charts/cellfed',
    helm: '/tools/helm',
    kubectl: '/tools/kubectl',
    namespace: 'cellfed-system',
    images: ['registry.local:5000/cellfed/cell-router:dev', 'cellfed/backup-controller'],
    routerCert: '/envs/a/pki/router/apiserver.crt',
    routerKey: '/envs/a/pki/router/apiserver.key',
    routerCa: '/envs/a/pki/router/ca.crt',
  });

  it('makes the router’s TLS Secret with its CA, then installs the chart with the loaded images, never pulled', () => {
    expect(plan.map((command) => command.command)).toEqual(['/tools/kubectl', '/tools/helm']);
    expect(plan[0]!.args).toEqual(
      expect.arrayContaining([
        'create',
        'secret',
        'generic',
        'cellfed-router-tls',
        '--type=kubernetes.io/tls',
        '--from-file=tls.crt=/envs/a/pki/router/apiserver.crt',
        '--from-file=tls.key=/envs/a/pki/router/apiserver.key',
        '--from-file=ca.crt=/envs/a/pki/router/ca.crt',
      ]),
    );
    const sets = plan[1]!.args.filter((_, i, args) => args[i - 1] === '--set');
    expect(sets).toEqual([
      'router.image.repository=registry.local:5000/cellfed/cell-router',
      'router.image.tag=dev',
      'router.image.pullPolicy=Never',
      'router.podDisruptionBudget.enabled=false',
      'backupController.image.repository=cellfed/backup-controller',
      'backupController.image.tag=latest',
      'backupController.image.pullPolicy=Never',
      'backupController.podDisruptionBudget.enabled=false',
      'rebalanceController.enabled=false',
      'router.service.type=NodePort',
      'router.service.nodePort=30443',
      'quotaController.image.pullPolicy=Never',
      'quotaController.podDisruptionBudget.enabled=false',
    ]);
    expect(plan[1]!.args.slice(0, 4)).toEqual(['upgrade', '--install', 'cellfed', '/repo/charts/cellfed']);
    expect(plan[1]!.args).toContain('--wait');
  });
});
