import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { DEFAULT_SHARED_RESOURCES, QUOTA_DIVIDED_ANNOTATION } from '@cellfed/api';
import { LEADER_ELECTION_DEFAULTS, formatDuration } from '@cellfed/controller-kit';

import { resolveTools } from '../tools.ts';
import {
  CELL_CHART_DIR,
  CHART_DIR,
  chartNotes,
  HelmRefused,
  lintChart,
  renderChart,
  type Rendered,
} from './helm-chart.ts';

// The chart as `helm template` renders it with the values files under charts/cellfed/ci/, read back and
// checked field by field. helm is the one scripts/build-tools.sh builds (CELLFED_TOOLS_BIN).
const helm = resolveTools(process.env['CELLFED_TOOLS_BIN'], ['helm']).helm;
const ciValues = (name: string) => ['-f', join(CHART_DIR, 'ci', name)];
const COMPONENTS = ['router', 'rebalance-controller', 'backup-controller'] as const;

interface Container {
  image: string;
  args: string[];
  securityContext: Record<string, unknown>;
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  volumeMounts?: { mountPath: string }[];
}
interface PodSpec {
  serviceAccountName: string;
  securityContext: Record<string, unknown>;
  containers: Container[];
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const only = (objects: Rendered[], kind: string) => objects.filter((object) => object.kind === kind);
const named = (objects: Rendered[], kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found)
    throw new Error(
      `no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`,
    );
  return found;
};
const podSpec = (deployment: Rendered) => (deployment.spec as { template: { spec: PodSpec } }).template.spec;
const container = (deployment: Rendered) => podSpec(deployment).containers[0]!;
const rules = (role: Rendered) => role['rules'] as Rule[];

describe('the cellfed chart', () => {
  it.each(readdirSync(join(CHART_DIR, 'ci')))('passes helm lint --strict with ci/%s', (file) => {
    expect(lintChart(helm, ciValues(file))).toContain('0 chart(s) failed');
  });

  describe('with its defaults', () => {
    const objects = renderChart(helm);

    it('runs each component as its own Deployment, 2 replicas, with its own ServiceAccount', () => {
      expect(
        only(objects, 'Deployment')
          .map((d) => d.metadata.name)
          .sort(),
      ).toEqual([...COMPONENTS, 'quota-controller'].map((component) => `cellfed-${component}`).sort());
      for (const component of COMPONENTS) {
        const deployment = named(objects, 'Deployment', `cellfed-${component}`);
        expect((deployment.spec as { replicas: number }).replicas).toBe(2);
        expect(podSpec(deployment).serviceAccountName).toBe(`cellfed-${component}`);
        named(objects, 'ServiceAccount', `cellfed-${component}`);
        expect(container(deployment).image).toBe(
          `ghcr.io/cellfed/${component === 'router' ? 'cell-router' : component}:0.1.0`,
        );
      }
    });

    it('elects leaders with the controllers’ own defaults, so the chart and the binaries agree', () => {
      const expected = [
        `--leader-elect-lease-duration=${formatDuration(LEADER_ELECTION_DEFAULTS.leaseDurationMs)}`,
        `--leader-elect-renew-deadline=${formatDuration(LEADER_ELECTION_DEFAULTS.renewDeadlineMs)}`,
        `--leader-elect-retry-period=${formatDuration(LEADER_ELECTION_DEFAULTS.retryPeriodMs)}`,
      ];
      for (const component of ['rebalance-controller', 'backup-controller'])
        expect(container(named(objects, 'Deployment', `cellfed-${component}`)).args).toEqual(
          expect.arrayContaining(expected),
        );
    });

    it('locks every pod down: non-root, read-only root, no capabilities, RuntimeDefault seccomp', () => {
      for (const deployment of only(objects, 'Deployment')) {
        expect(podSpec(deployment).securityContext).toMatchObject({
          runAsNonRoot: true,
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect(container(deployment).securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
      }
    });

    it('has a helm test that runs Node.js by its path in the router’s image, where nothing is on PATH', () => {
      const test = named(objects, 'Pod', 'cellfed-router-readyz-test');
      const [probe] = (test.spec as { containers: (Container & { command: string[] })[] }).containers;
      expect(probe!.image).toBe(container(named(objects, 'Deployment', 'cellfed-router')).image);
      expect(probe!.command[0]).toBe('/nodejs/bin/node');
    });

    it('probes /healthz and /readyz, and leader-elects the controllers', () => {
      for (const component of COMPONENTS) {
        const deployment = named(objects, 'Deployment', `cellfed-${component}`);
        expect(container(deployment).livenessProbe.httpGet.path).toBe('/healthz');
        expect(container(deployment).readinessProbe.httpGet.path).toBe('/readyz');
      }
      for (const component of ['rebalance-controller', 'backup-controller', 'quota-controller'])
        expect(container(named(objects, 'Deployment', `cellfed-${component}`)).args).toContain(
          '--leader-elect=true',
        );
    });

    it('serves the router on 443 with its certificate from a Secret and this cluster’s client CA', () => {
      const args = container(named(objects, 'Deployment', 'cellfed-router')).args;
      expect(args).toEqual(
        expect.arrayContaining([
          '--tls-secret=cellfed-system/cellfed-router-tls',
          '--client-ca-file=/etc/cellfed/client-ca/ca.crt',
          '--replica-id=$(POD_NAME)',
          '--cellset=default',
          '--secret-namespace=cellfed-system',
        ]),
      );
      const service = named(objects, 'Service', 'cellfed-router');
      expect(service.spec).toMatchObject({ type: 'ClusterIP', ports: [{ port: 443, targetPort: 'https' }] });
    });

    it('labels everything it makes with the app.kubernetes.io labels', () => {
      for (const object of objects) {
        expect(object.metadata.labels).toMatchObject({
          'app.kubernetes.io/name': 'cellfed',
          'app.kubernetes.io/instance': 'cellfed',
          'app.kubernetes.io/managed-by': 'Helm',
          'app.kubernetes.io/part-of': 'cellfed',
        });
      }
    });

    it('grants least privilege: no wildcard; Secrets cluster-wide only to follow pod templates (by name) and count them for quotas', () => {
      for (const role of [...only(objects, 'ClusterRole'), ...only(objects, 'Role')])
        for (const rule of rules(role)) {
          expect(rule.verbs).not.toContain('*');
          // Two exceptions. The router impersonates every extra and uid its callers carry, which RBAC cannot
          // name otherwise (a rule's "userextras/*" matches no key); no more than impersonating any user.
          if (role.metadata.name === 'cellfed-router' && rule.resources.includes('*'))
            expect(rule).toMatchObject({ apiGroups: ['authentication.k8s.io'], verbs: ['impersonate'] });
          // The quota controller lists and watches every resource a quota may count, as
          // kube-controller-manager's own quota controller does (system:controller:resourcequota-controller).
          else if (role.metadata.name === 'cellfed-quota-controller' && rule.resources.includes('*'))
            expect(rule).toEqual({ apiGroups: ['*'], resources: ['*'], verbs: ['list', 'watch'] });
          else expect(rule.resources).not.toContain('*');
        }
      const secretRules = only(objects, 'ClusterRole').flatMap((role) =>
        rules(role)
          .filter((rule) => rule.resources.includes('secrets'))
          .map((rule) => ({ role: role.metadata.name, verbs: rule.verbs })),
      );
      expect(secretRules).toEqual([{ role: 'cellfed-rebalance-controller', verbs: ['get'] }]);
      // Only the router impersonates (it calls apiservers as the caller).
      const impersonators = only(objects, 'ClusterRole').filter((role) =>
        rules(role).some((rule) => rule.verbs.includes('impersonate')),
      );
      expect(impersonators.map((role) => role.metadata.name)).toEqual(['cellfed-router']);
      // The backup controller only reads the CellSet unless it may mark cells Down.
      const backup = named(objects, 'ClusterRole', 'cellfed-backup-controller');
      expect(rules(backup).find((rule) => rule.resources.includes('cellsets'))?.verbs).toEqual([
        'get',
        'list',
        'watch',
      ]);
    });

    it('keeps disruption budgets and leaves every optional part out', () => {
      expect(only(objects, 'PodDisruptionBudget')).toHaveLength(4);
      for (const kind of [
        'ServiceMonitor',
        'PrometheusRule',
        'NetworkPolicy',
        'HorizontalPodAutoscaler',
        'Ingress',
        'Certificate',
      ])
        expect(only(objects, kind)).toEqual([]);
      expect(only(objects, 'Pod').map((pod) => pod.metadata.annotations?.['helm.sh/hook'])).toEqual(['test']);
      for (const deployment of only(objects, 'Deployment'))
        expect(container(deployment).args.join(' ')).not.toContain('--otlp-endpoint');
    });
  });

  describe('its quota controller', () => {
    const kubeconfigOf = (objects: Rendered[]) =>
      (named(objects, 'ConfigMap', 'cellfed-quota-controller')['data'] as { kubeconfig: string }).kubeconfig;
    const volumes = (objects: Rendered[]) =>
      (
        podSpec(named(objects, 'Deployment', 'cellfed-quota-controller')) as PodSpec & {
          volumes: { name: string; secret?: unknown; configMap?: unknown }[];
        }
      ).volumes;

    it('is kube-controller-manager’s quota controller alone, calling the router as its ServiceAccount', () => {
      const objects = renderChart(helm);
      const deployment = named(objects, 'Deployment', 'cellfed-quota-controller');
      expect(container(deployment).image).toBe('registry.k8s.io/kube-controller-manager:v1.37.2');
      expect(container(deployment).args).toEqual(
        expect.arrayContaining([
          '--controllers=resourcequota',
          '--kubeconfig=/etc/cellfed/kubeconfig/kubeconfig',
          '--leader-elect-resource-namespace=cellfed-system',
          '--leader-elect-resource-name=cellfed-quota-controller',
        ]),
      );
      const kubeconfig = kubeconfigOf(objects);
      expect(kubeconfig).toContain('server: https://cellfed-router.cellfed-system.svc:443');
      expect(kubeconfig).toContain('tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token');
      // The router's CA from its TLS Secret, where cert-manager writes it.
      expect(volumes(objects).find((volume) => volume.name === 'router-ca')?.secret).toEqual({
        secretName: 'cellfed-router-tls',
        items: [{ key: 'ca.crt', path: 'ca.crt' }],
      });
      // Its quota status writes are its only writes beyond its Lease and the Events about it.
      const writes = [
        ...rules(named(objects, 'ClusterRole', 'cellfed-quota-controller')),
        ...rules(named(objects, 'Role', 'cellfed-quota-controller')),
      ].filter((rule) => rule.verbs.some((verb) => !['get', 'list', 'watch'].includes(verb)));
      expect(writes.map((rule) => rule.resources.join())).toEqual([
        'resourcequotas/status',
        'leases',
        'events',
      ]);
    });

    it('may write a quota’s status only once the rebalance controller has divided it, and nobody else is held', () => {
      const policy = named(renderChart(helm), 'ValidatingAdmissionPolicy', 'cellfed-quota-controller')
        .spec as {
        matchConstraints: { resourceRules: { resources: string[]; operations: string[] }[] };
        matchConditions: { expression: string }[];
        validations: { expression: string }[];
      };
      expect(policy.matchConstraints.resourceRules).toEqual([
        expect.objectContaining({ resources: ['resourcequotas/status'], operations: ['UPDATE'] }),
      ]);
      expect(policy.matchConditions.map((condition) => condition.expression)).toEqual([
        'request.userInfo.username == "system:serviceaccount:cellfed-system:cellfed-quota-controller"',
      ]);
      // The mark is the quota's own uid: a manifest copied from another quota opens nothing.
      expect(policy.validations[0]!.expression).toContain(
        `oldObject.metadata.annotations['${QUOTA_DIVIDED_ANNOTATION}'] == oldObject.metadata.uid`,
      );
      // Bound, and marked by the rebalance controller, which may patch quotas for it.
      named(renderChart(helm), 'ValidatingAdmissionPolicyBinding', 'cellfed-quota-controller');
      expect(
        rules(named(renderChart(helm), 'ClusterRole', 'cellfed-rebalance-controller')).find((rule) =>
          rule.resources.includes('resourcequotas'),
        )?.verbs,
      ).toContain('patch');
      // Nobody divides quotas without the rebalance controller's divideQuotas: nothing to wait for then.
      expect(
        only(
          renderChart(helm, ['--set', 'rebalanceController.divideQuotas=false']),
          'ValidatingAdmissionPolicy',
        ),
      ).toEqual([]);
    });

    it('defaults to the controller manager of the Kubernetes release the project builds and tests', () => {
      const goMod = readFileSync(join(CHART_DIR, '..', '..', 'e2e', 'tools', 'go.mod'), 'utf8');
      const release = /^\s*k8s\.io\/kubernetes (v\S+)/m.exec(goMod)?.[1];
      expect(container(named(renderChart(helm), 'Deployment', 'cellfed-quota-controller')).image).toBe(
        `registry.k8s.io/kube-controller-manager:${release}`,
      );
    });

    it('takes the router’s address and CA when given, and needs the address without the router', () => {
      const objects = renderChart(helm, [
        '--set',
        'quotaController.routerServer=https://router.example:6443',
        '--set',
        'quotaController.routerCA.configMapName=router-ca',
      ]);
      expect(kubeconfigOf(objects)).toContain('server: https://router.example:6443');
      expect(volumes(objects).find((volume) => volume.name === 'router-ca')?.configMap).toEqual({
        name: 'router-ca',
        items: [{ key: 'ca.crt', path: 'ca.crt' }],
      });
      expect(() => renderChart(helm, ['--set', 'router.enabled=false'])).toThrow(
        'quotaController.routerServer: the router is not installed by this release',
      );
    });
  });

  describe('with every optional part on (ci/all-features-values.yaml)', () => {
    const objects = renderChart(helm, ciValues('all-features-values.yaml'));

    it('scales the router with an HPA instead of a fixed replica count', () => {
      const router = named(objects, 'Deployment', 'cellfed-router');
      expect((router.spec as { replicas?: number }).replicas).toBeUndefined();
      expect(named(objects, 'HorizontalPodAutoscaler', 'cellfed-router').spec).toMatchObject({
        minReplicas: 3,
        maxReplicas: 12,
        scaleTargetRef: { kind: 'Deployment', name: 'cellfed-router' },
      });
    });

    it('has cert-manager issue the serving certificate for the Service’s names and the extra ones', () => {
      const certificate = named(objects, 'Certificate', 'cellfed-router');
      expect(certificate.spec).toMatchObject({
        secretName: 'cellfed-router-tls',
        issuerRef: { name: 'cluster-ca', kind: 'ClusterIssuer' },
      });
      expect((certificate.spec as { dnsNames: string[] }).dnsNames).toEqual(
        expect.arrayContaining(['cellfed-router.cellfed-system.svc', 'cellfed.example.com']),
      );
    });

    it('exposes the router by LoadBalancer and a TLS-passthrough Ingress', () => {
      expect(named(objects, 'Service', 'cellfed-router').spec).toMatchObject({
        type: 'LoadBalancer',
        loadBalancerSourceRanges: ['10.0.0.0/8'],
      });
      const ingress = named(objects, 'Ingress', 'cellfed-router');
      expect(ingress.metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' });
      expect(ingress.spec).toMatchObject({
        ingressClassName: 'nginx',
        rules: [{ host: 'cellfed.example.com' }],
      });
    });

    it('opens only each component’s own ports, metrics only to the monitoring namespace', () => {
      const policies = only(objects, 'NetworkPolicy');
      expect(policies).toHaveLength(4);
      // The quota controller's: its health port only.
      const quota = named(objects, 'NetworkPolicy', 'cellfed-quota-controller').spec as {
        ingress: { ports: { port: string }[]; from?: unknown[] }[];
      };
      expect(quota.ingress).toEqual([{ ports: [{ port: 'https-health', protocol: 'TCP' }] }]);
      const router = named(objects, 'NetworkPolicy', 'cellfed-router').spec as {
        ingress: { ports: { port: string }[]; from?: unknown[] }[];
      };
      expect(router.ingress.map((rule) => rule.ports[0]!.port)).toEqual(['https', 'http-metrics']);
      expect(router.ingress[1]!.from).toEqual([
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
      ]);
      // The API port to the clients given, and to the quota controller, which counts through the router.
      expect(router.ingress[0]!.from).toEqual([
        { namespaceSelector: { matchLabels: { 'cellfed.io/api-clients': 'true' } } },
        {
          podSelector: {
            matchLabels: {
              'app.kubernetes.io/name': 'cellfed',
              'app.kubernetes.io/instance': 'cellfed',
              'app.kubernetes.io/component': 'quota-controller',
            },
          },
        },
      ]);
    });

    it('monitors: a ServiceMonitor per component, the four alerts, the dashboard', () => {
      expect(only(objects, 'ServiceMonitor').map((monitor) => monitor.metadata.labels?.['release'])).toEqual([
        'prometheus',
        'prometheus',
        'prometheus',
      ]);
      const rule = only(objects, 'PrometheusRule')[0]!;
      const alerts = (rule.spec as { groups: { rules: { alert: string; expr: string }[] }[] }).groups[0]!
        .rules;
      expect(alerts.map((alert) => alert.alert)).toEqual([
        'CellfedCellDown',
        'CellfedMigrationStuck',
        'CellfedBackupLagHigh',
        'CellfedRouterErrorRatio',
      ]);
      expect(alerts[2]!.expr).toContain('cellfed_backup_replication_lag_seconds_bucket');
      const dashboard = named(objects, 'ConfigMap', 'cellfed-dashboard');
      expect(dashboard.metadata).toMatchObject({
        namespace: 'monitoring',
        labels: { grafana_dashboard: '1' },
      });
      const json = JSON.parse((dashboard['data'] as Record<string, string>)['cellfed.json']!) as {
        panels: { title: string }[];
      };
      expect(json.panels.map((panel) => panel.title)).toEqual(
        expect.arrayContaining([
          'Fenced writes (429 while migrating)',
          'Backup replication lag p50 / p99',
          'Cell health (1 = healthy)',
        ]),
      );
    });

    it('passes the settings through: CellSet, Secret namespace, image digest, auto Down, labels', () => {
      const backup = named(objects, 'Deployment', 'cellfed-backup-controller');
      expect(container(backup).args).toEqual(
        expect.arrayContaining([
          '--cellset=production',
          '--secret-namespace=cellfed-cells',
          '--auto-down-after=5m',
          '--workers=32',
        ]),
      );
      expect(container(named(objects, 'Deployment', 'cellfed-router')).image).toBe(
        'ghcr.io/cellfed/cell-router@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
      );
      expect(rules(named(objects, 'ClusterRole', 'cellfed-backup-controller'))[0]!.verbs).toContain('patch');
      const secretRoles = only(objects, 'Role').filter((role) =>
        rules(role).some((rule) => rule.resources.includes('secrets')),
      );
      expect(secretRoles.filter((role) => role.metadata.namespace === 'cellfed-cells')).toHaveLength(3);
      expect(container(named(objects, 'Deployment', 'cellfed-rebalance-controller')).args).toEqual(
        expect.arrayContaining(['--window=64', '--rate=50', '--delete-after=6h']),
      );
      for (const object of objects) expect(object.metadata.labels?.['team']).toBe('platform');
    });

    it('sends every component’s spans to the OTLP collector given', () => {
      for (const deployment of COMPONENTS.map((component) =>
        named(objects, 'Deployment', `cellfed-${component}`),
      ))
        expect(container(deployment).args).toEqual(
          expect.arrayContaining([
            '--otlp-endpoint=http://otel-collector.observability:4318',
            '--trace-sample-ratio=0.25',
          ]),
        );
    });
  });

  it('renders only the router when the controllers are off', () => {
    const objects = renderChart(helm, ciValues('router-only-values.yaml'));
    expect(new Set(objects.map((object) => object.metadata.labels?.['app.kubernetes.io/component']))).toEqual(
      new Set(['router']),
    );
    expect(only(objects, 'PodDisruptionBudget')).toEqual([]);
    expect(container(named(objects, 'Deployment', 'cellfed-router')).args).not.toContain(
      '--client-ca-file=/etc/cellfed/client-ca/ca.crt',
    );
  });

  it.each([
    ['sumBudgets', 'poddisruptionbudgets/status', '--sum-budgets'],
    ['followAutoscalers', 'horizontalpodautoscalers/status', '--follow-autoscalers'],
    ['followClaims', 'persistentvolumeclaims/status', '--follow-claims'],
  ])(
    'lets the rebalance controller write %s’s status in the control plane only with it on',
    (value, status, flag) => {
      const statusWriters = (args: string[]) =>
        only(renderChart(helm, args), 'ClusterRole').flatMap((role) =>
          rules(role)
            .filter((rule) => rule.resources.includes(status))
            .map((rule) => ({ role: role.metadata.name, verbs: rule.verbs })),
        );
      expect(statusWriters([])).toEqual([{ role: 'cellfed-rebalance-controller', verbs: ['update'] }]);
      const rebalance = (args: string[]) =>
        container(named(renderChart(helm, args), 'Deployment', 'cellfed-rebalance-controller')).args;
      expect(rebalance([])).toContain(`${flag}=true`);
      const off = ['--set', `rebalanceController.${value}=false`];
      expect(statusWriters(off)).toEqual([]);
      expect(rebalance(off)).toContain(`${flag}=false`);
    },
  );

  it('grants the rebalance controller list and watch of Secrets only when they are shared (opt-in), and nobody else by name', () => {
    const noFollowers = [
      '--set',
      'rebalanceController.followPodReferences=false',
      '--set',
      'rebalanceController.divideQuotas=false',
    ];
    const shareSecrets = [
      ...noFollowers,
      '--set-json',
      'rebalanceController.sharedResourceRules=[{"apiGroups":[""],"resources":["secrets"],"verbs":["get","list","watch"]}]',
    ];
    const secretVerbs = (args: string[]) =>
      only(renderChart(helm, args), 'ClusterRole').flatMap((role) =>
        rules(role)
          .filter((rule) => rule.resources.includes('secrets'))
          .map((rule) => ({ role: role.metadata.name, verbs: rule.verbs })),
      );
    expect(secretVerbs(shareSecrets)).toEqual([
      { role: 'cellfed-rebalance-controller', verbs: ['get', 'list', 'watch'] },
    ]);
    expect(secretVerbs(noFollowers)).toEqual([]);
    const rebalance = named(renderChart(helm, noFollowers), 'Deployment', 'cellfed-rebalance-controller');
    expect(container(rebalance).args).toContain('--follow-pod-references=false');
  });

  it('gives each component its own cell credentials namespace, which no other component may read, exempts the others’ cell users and has the router refuse callers by them', () => {
    const own = [
      ...['--set', 'router.credentialsNamespace=cf-router'],
      ...['--set', 'rebalanceController.credentialsNamespace=cf-rebalance'],
      ...['--set', 'backupController.credentialsNamespace=cf-backup'],
      ...['--set', 'router.cellUser=system:serviceaccount:cellfed-system:cellfed-router'],
      ...['--set', 'backupController.cellUser=cellfed-backup-controller'],
      ...['--set', 'rebalanceController.cellUser=cellfed-rebalance-controller'],
    ];
    const objects = renderChart(helm, own);
    // Who may read Secrets in which namespace, by Role and binding.
    const readers = only(objects, 'RoleBinding').flatMap((binding) => {
      const role = named(objects, 'Role', (binding['roleRef'] as { name: string }).name);
      const readsSecrets = rules(role).some(
        (rule) => rule.resources.includes('secrets') && rule.verbs.includes('get'),
      );
      const subjects = binding['subjects'] as { name: string }[];
      return readsSecrets
        ? subjects
            .map((subject) => `${subject.name}@${binding.metadata.namespace}`)
            .filter((who) => !who.includes('tls'))
        : [];
    });
    expect(readers.filter((who) => !who.startsWith('cellfed-router@cellfed-system')).sort()).toEqual([
      'cellfed-backup-controller@cf-backup',
      'cellfed-rebalance-controller@cf-rebalance',
      'cellfed-router@cf-router',
    ]);
    // The router's one Secret in the release namespace is its serving certificate's, by name.
    const tls = named(objects, 'Role', 'cellfed-router-tls');
    expect(rules(tls)).toEqual([
      expect.objectContaining({ resources: ['secrets'], resourceNames: ['cellfed-router-tls'] }),
    ]);
    for (const component of COMPONENTS)
      expect(container(named(objects, 'Deployment', `cellfed-${component}`)).args).toContain(
        `--credentials-namespace=${{ router: 'cf-router', 'rebalance-controller': 'cf-rebalance', 'backup-controller': 'cf-backup' }[component]}`,
      );
    expect(container(named(objects, 'Deployment', 'cellfed-rebalance-controller')).args).toEqual(
      expect.arrayContaining([
        '--router-cell-user=system:serviceaccount:cellfed-system:cellfed-router',
        '--backup-controller-cell-user=cellfed-backup-controller',
      ]),
    );
    expect(container(named(objects, 'Deployment', 'cellfed-router')).args).toEqual(
      expect.arrayContaining([
        '--router-cell-user=system:serviceaccount:cellfed-system:cellfed-router',
        '--rebalance-controller-cell-user=cellfed-rebalance-controller',
        '--backup-controller-cell-user=cellfed-backup-controller',
      ]),
    );
    // Without them, the components share the release namespace's Secrets and the rebalance controller's
    // identity, as before.
    const shared = renderChart(helm, []);
    expect(container(named(shared, 'Deployment', 'cellfed-router')).args.join(' ')).not.toMatch(
      /-cell-user=/,
    );
    expect(container(named(shared, 'Deployment', 'cellfed-rebalance-controller')).args.join(' ')).not.toMatch(
      /--credentials-namespace|-cell-user=/,
    );
    expect(rules(named(shared, 'Role', 'cellfed-backup-controller'))).toContainEqual(
      expect.objectContaining({ resources: ['secrets'], verbs: ['get', 'list', 'watch'] }),
    );
  });

  it('warns after install of a credentials namespace without its cell user, and only then', () => {
    const notes = chartNotes(helm, [
      ...['--set', 'router.credentialsNamespace=cf-router', '--set', 'router.cellUser=cellfed-router'],
      ...['--set', 'backupController.credentialsNamespace=cf-backup'],
    ]);
    expect(notes.match(/^Warning: .*/gm)).toEqual([
      'Warning: backupController.credentialsNamespace is set but backupController.cellUser is not. If this component calls the cells',
    ]);
    expect(chartNotes(helm)).not.toContain('Warning');
  });

  it.each([
    [['--set', 'router.replicaCount=-1'], "at '/router/replicaCount': minimum: got -1, want 0"],
    [['--set', 'router.bogus=1'], "at '/router': additional properties 'bogus' not allowed"],
    [['--set', 'rebalanceController.deleteAfter=12 hours'], "at '/rebalanceController/deleteAfter'"],
    [['--set', 'router.service.type=Public'], "at '/router/service/type'"],
    [['--set', 'global.logLevel=loud'], "at '/global/logLevel'"],
    [['--set', 'global.tracing.sampleRatio=2'], "at '/global/tracing/sampleRatio'"],
    [['--set', 'global.tracing.otlpEndpoint=collector:4318'], "at '/global/tracing/otlpEndpoint'"],
    [['--set', 'quotaController.image.tag=1.37'], "at '/quotaController/image/tag'"],
    // Zero would turn its full count off, and a creation in a cell would never show.
    [['--set', 'quotaController.syncPeriod=0s'], "at '/quotaController/syncPeriod'"],
    [['--set', 'router.credentialsNamespace=Not_A_Namespace'], "at '/router/credentialsNamespace'"],
    [['--set-json', 'backupController.cellUser="a,b"'], "at '/backupController/cellUser'"],
    [['--set-json', 'rebalanceController.cellUser=" a"'], "at '/rebalanceController/cellUser'"],
    // What the flag refuses too: a name the cells' HTTP parsers would trim.
    [['--set-json', 'router.cellUser="cellfed-router "'], "at '/router/cellUser'"],
    [
      ['--set', 'router.credentialsNamespace=cells', '--set', 'backupController.credentialsNamespace=cells'],
      "each credentialsNamespace must be that component's alone",
    ],
  ])('refuses %j and says where', (args, message) => {
    expect(() => renderChart(helm, args)).toThrow(HelmRefused);
    expect(() => renderChart(helm, args)).toThrow(message);
  });
});

describe('both charts with their defaults', () => {
  const allows = (
    roleRules: Rule[],
    { group, resource }: { group: string; resource: string },
    verbs: string[],
  ) =>
    verbs.every((verb) =>
      roleRules.some(
        (rule) =>
          rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb),
      ),
    );

  it.each(DEFAULT_SHARED_RESOURCES.map((gvr) => [`${gvr.resource}.${gvr.group}`, gvr] as const))(
    'let the rebalance controller mirror the CellSet’s default shared resource %s: read it in the control plane, write it in the cells',
    (_name, gvr) => {
      const controlPlane = rules(named(renderChart(helm), 'ClusterRole', 'cellfed-rebalance-controller'));
      const cell = rules(
        named(
          renderChart(helm, [], 'cellfed', 'default', CELL_CHART_DIR),
          'ClusterRole',
          'cellfed-rebalance-controller',
        ),
      );
      expect(allows(controlPlane, gvr, ['get', 'list', 'watch'])).toBe(true);
      expect(allows(controlPlane, gvr, ['create'])).toBe(false);
      expect(allows(cell, gvr, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'])).toBe(true);
    },
  );
});

describe('the cellfed-cell chart', () => {
  const cellValues = ['-f', join(CELL_CHART_DIR, 'ci', 'bound-values.yaml')];
  /** The rules of the rebalance controller's ClusterRole, rendered with `args`. */
  const rebalanceRules = (args: string[]) =>
    rules(
      named(
        renderChart(helm, args, 'cellfed', 'default', CELL_CHART_DIR),
        'ClusterRole',
        'cellfed-rebalance-controller',
      ),
    );

  it('passes helm lint --strict, with and without subjects', () => {
    expect(lintChart(helm, [], CELL_CHART_DIR)).toContain('0 chart(s) failed');
    expect(lintChart(helm, cellValues, CELL_CHART_DIR)).toContain('0 chart(s) failed');
  });

  it('makes one ClusterRole per component, bound only to the subjects given', () => {
    const bare = renderChart(
      helm,
      ['--set-json', 'quotaController.subjects=[]'],
      'cellfed',
      'default',
      CELL_CHART_DIR,
    );
    expect(
      only(bare, 'ClusterRole')
        .map((role) => role.metadata.name)
        .sort(),
    ).toEqual(['cellfed-backup-controller', 'cellfed-rebalance-controller', 'cellfed-router']);
    expect(only(bare, 'ClusterRoleBinding')).toEqual([]);
    // Another release in the same cell (another federation's components) claims names of its own.
    expect(
      only(renderChart(helm, [], 'staging', 'default', CELL_CHART_DIR), 'ClusterRole')
        .map((role) => role.metadata.name)
        .sort(),
    ).toEqual([
      'staging-cellfed-backup-controller',
      'staging-cellfed-quota-controller',
      'staging-cellfed-rebalance-controller',
      'staging-cellfed-router',
    ]);
    const bound = renderChart(helm, cellValues, 'cellfed', 'default', CELL_CHART_DIR);
    expect(named(bound, 'ClusterRoleBinding', 'cellfed-backup-controller')['subjects']).toEqual([
      { kind: 'Group', name: 'cellfed:controllers' },
    ]);
  });

  it('lets the cellfed chart’s quota controller, as the router calls the cell, only read what it counts', () => {
    const objects = renderChart(helm, [], 'cellfed', 'default', CELL_CHART_DIR);
    expect(named(objects, 'ClusterRoleBinding', 'cellfed-quota-controller')['subjects']).toEqual([
      { kind: 'ServiceAccount', name: 'cellfed-quota-controller', namespace: 'cellfed-system' },
    ]);
    expect(rules(named(objects, 'ClusterRole', 'cellfed-quota-controller'))).toEqual([
      { apiGroups: ['*'], resources: ['*'], verbs: ['list', 'watch'] },
    ]);
    // Never more than reads, whatever rules are given.
    expect(() =>
      renderChart(
        helm,
        ['--set-json', 'quotaController.rules=[{"apiGroups":[""],"resources":["pods"],"verbs":["delete"]}]'],
        'cellfed',
        'default',
        CELL_CHART_DIR,
      ),
    ).toThrow("at '/quotaController/rules/0/verbs/0'");
  });

  it('follows the CellSet’s cellular resources', () => {
    const objects = renderChart(
      helm,
      ['--set', 'cellularResources[0].group=example.com', '--set', 'cellularResources[0].resource=widgets'],
      'cellfed',
      'default',
      CELL_CHART_DIR,
    );
    const backup = rules(named(objects, 'ClusterRole', 'cellfed-backup-controller'));
    expect(backup[0]).toEqual({
      apiGroups: ['example.com'],
      resources: ['widgets'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    });
    expect(backup.some((rule) => rule.resources.includes('deployments'))).toBe(false);
  });

  it('lets the rebalance controller copy the revision history of the cellular workloads only', () => {
    const historyRules = (args: string[]) =>
      rebalanceRules(args).filter((rule) =>
        rule.resources.some((resource) => /replicasets|controllerrevisions|finalizers/.test(resource)),
      );
    expect(historyRules([])).toEqual([
      { apiGroups: ['apps'], resources: ['replicasets', 'controllerrevisions'], verbs: ['list', 'create'] },
      {
        apiGroups: ['apps'],
        resources: ['deployments/finalizers', 'statefulsets/finalizers', 'daemonsets/finalizers'],
        verbs: ['update'],
      },
    ]);
    expect(
      historyRules(['--set-json', 'cellularResources=[{"group":"apps","resource":"statefulsets"}]']),
    ).toEqual([
      { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['list', 'create'] },
      { apiGroups: ['apps'], resources: ['statefulsets/finalizers'], verbs: ['update'] },
    ]);
    expect(historyRules(['--set-json', 'cellularResources=[{"group":"","resource":"configmaps"}]'])).toEqual(
      [],
    );
  });

  it('lets the rebalance controller keep follower Secrets in the cell, and all of them only when shared', () => {
    const secretRules = (args: string[]) =>
      rebalanceRules(args).filter((rule) => rule.resources.includes('secrets'));
    expect(secretRules([])).toEqual([
      {
        apiGroups: [''],
        resources: ['configmaps', 'secrets'],
        verbs: ['get', 'list', 'create', 'update', 'delete'],
      },
    ]);
    const off = ['--set', 'followPodReferences=false', '--set', 'divideQuotas=false'];
    expect(secretRules(off)).toEqual([]);
    expect(
      secretRules([...off, '--set-json', 'sharedResources=[{"group":"","resource":"secrets"}]']),
    ).toEqual([
      {
        apiGroups: [''],
        resources: ['secrets'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
    ]);
  });

  it('refuses a subject of an unknown kind', () => {
    expect(() =>
      renderChart(
        helm,
        ['--set', 'router.subjects[0].kind=Robot', '--set', 'router.subjects[0].name=x'],
        'cell',
        'default',
        CELL_CHART_DIR,
      ),
    ).toThrow("at '/router/subjects/0/kind'");
  });
});
