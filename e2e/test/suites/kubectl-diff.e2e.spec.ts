import { parseCellSetSpec } from '@cellfed/api';
import { join } from 'node:path';

import { RoutingTable } from '@cellfed/hashing';

import { cellSetSpec, eventually } from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import {
  drainFirstCell,
  joinFixture,
  joinThirdCell,
  pickName,
  plainNamespaceOf,
  startJoinFederation,
  stopJoinFederation,
} from '../helpers/join-fixture.ts';
import { kubectl } from '../helpers/router-process.ts';
import type { RebalancedFederation } from '../helpers/scratch-federation.ts';

/** What a namespace holds for the script: a workload with what a cell's controllers make for it, and more. */
const MANIFEST = `
apiVersion: v1
kind: ConfigMap
metadata: { name: settings, labels: { app: web } }
data: { color: blue }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: builder }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web, labels: { app: web } }
spec:
  replicas: 2
  # Pods never run here (no kubelets): Recreate keeps the pods of a rollout at 2 on both sides.
  strategy: { type: Recreate }
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      serviceAccountName: builder
      containers: [{ name: web, image: nginx:1.27, ports: [{ containerPort: 80 }] }]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db, labels: { app: db } }
spec:
  replicas: 1
  serviceName: db
  podManagementPolicy: Parallel
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:
      containers: [{ name: db, image: redis:7.2 }]
---
apiVersion: v1
kind: Service
metadata: { name: web }
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 80 }]
---
apiVersion: batch/v1
kind: CronJob
metadata: { name: nightly }
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{ name: job, image: busybox:1.36, command: [date] }]
`;

/**
 * The same kubectl script through the router and against one plain apiserver (the control plane, which
 * runs its own controllers), before, during and after a join and a drain, with the answers compared line
 * by line once what differs between any two apiservers is masked: namespace names, generated name suffixes,
 * ages, times, uids, versions and IPs.
 */
interface Step {
  name: string;
  args: (phase: string) => string[];
  input?: string;
  /** Compared as sets of lines (events: how many of each depends on timing). */
  unordered?: boolean;
  /**
   * Not compared while objects move: the pods of both copies of a moving Deployment exist (and are listed)
   * until the old copy is quiesced, just after its move.
   */
  settledOnly?: boolean;
  /** Replaced before comparing (what a move changes and one apiserver would not), in order. */
  masked?: [RegExp, string][];
  /** Waits, on each side, for the rollout the step started on this workload to be seen by its controller. */
  observed?: string;
}

const SCRIPT: Step[] = [
  { name: 'apply', args: () => ['apply', '-f', '-'], input: MANIFEST },
  { name: 'get all', args: () => ['get', 'all'], settledOnly: true },
  {
    name: 'get names',
    // A Deployment's ReplicaSets (its revision history) move with it.
    args: () => ['get', 'deploy,rs,svc,cm,sa,cronjob', '-o', 'name'],
  },
  {
    name: 'describe deployment',
    args: () => ['describe', 'deployment', 'web'],
    // The events of past rollouts: the events step compares them.
    masked: [[/^Events:[\s\S]*$/m, 'Events: (masked)']],
  },
  {
    name: 'set image',
    args: () => ['set', 'image', 'deployment/web', 'web=nginx:1.28'],
    observed: 'deployment/web',
  },
  { name: 'rollout undo', args: () => ['rollout', 'undo', 'deployment/web'], observed: 'deployment/web' },
  { name: 'rollout history', args: () => ['rollout', 'history', 'deployment/web'] },
  // A StatefulSet's revision history is its ControllerRevisions: they move with it too.
  {
    name: 'set image statefulset',
    args: () => ['set', 'image', 'statefulset/db', 'db=redis:7.4'],
    observed: 'statefulset/db',
  },
  {
    name: 'rollout undo statefulset',
    args: () => ['rollout', 'undo', 'statefulset/db'],
    observed: 'statefulset/db',
  },
  { name: 'rollout history statefulset', args: () => ['rollout', 'history', 'statefulset/db'] },
  { name: 'rollout status', args: () => ['rollout', 'status', 'deployment/web', '--watch=false'] },
  { name: 'label', args: (phase) => ['label', 'deployment', 'web', `phase=${phase}`, '--overwrite'] },
  {
    name: 'annotate',
    args: (phase) => ['annotate', 'configmap', 'settings', `note=${phase}`, '--overwrite'],
  },
  {
    name: 'patch',
    args: (phase) => ['patch', 'configmap', 'settings', '-p', `{"data":{"phase":"${phase}"}}`],
  },
  { name: 'get yaml', args: () => ['get', 'configmap', 'settings', '-o', 'yaml'] },
  {
    name: 'get jsonpath',
    args: () => [
      'get',
      'deployment',
      'web',
      '-o',
      'jsonpath={.metadata.labels.phase} {.spec.replicas} {.spec.template.spec.serviceAccountName}',
    ],
  },
  { name: 'diff', args: () => ['diff', '-f', '-'], input: MANIFEST },
  {
    name: 'events',
    // The Deployment's: an apiserver's own IP repair loop may also warn about Service web
    // (ClusterIPNotAllocated) when its Service informer runs ahead of its IPAddress informer, on any apiserver.
    args: () => [
      'get',
      'events',
      '--field-selector',
      'involvedObject.kind=Deployment,involvedObject.name=web',
      '-o',
      'custom-columns=KIND:.involvedObject.kind,REASON:.reason,MESSAGE:.message',
      '--no-headers',
    ],
    unordered: true,
  },
  {
    name: 'create',
    args: (phase) => ['create', 'configmap', `made-${phase}`, '--from-literal=a=b'],
  },
  { name: 'delete', args: (phase) => ['delete', 'configmap', `made-${phase}`] },
];

/** Fields of the Deployment `web` as kubectl prints them (`jsonpath`). */
async function webFields(kubeconfig: string, namespace: string, jsonpath: string): Promise<string> {
  const { out } = await kubectl(kubeconfig, [
    '-n',
    namespace,
    'get',
    'deployment',
    'web',
    '-o',
    `jsonpath=${jsonpath}`,
  ]);
  return out;
}

/** Until a workload's controller has seen its latest spec (it has made the rollout's revision). */
async function rolloutObserved(kubeconfig: string, namespace: string, workload: string): Promise<void> {
  await eventually(
    `${workload}'s rollout seen in ${namespace}`,
    async () => {
      const { out } = await kubectl(kubeconfig, [
        '-n',
        namespace,
        'get',
        workload,
        '-o',
        'jsonpath={.metadata.generation} {.status.observedGeneration}',
      ]);
      const [generation, observed] = out.split(' ');
      return generation && generation === observed ? true : undefined;
    },
    30_000,
  );
}

/** Masks what differs between any two apiservers (and between a namespace and its plain twin). */
function normalized(text: string, namespace: string): string {
  return text
    .replaceAll(namespace, 'NS')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, 'UID')
    .replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b/g, 'TIME')
    .replace(/\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}\b/g, 'TIME')
    .replace(/\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b/g, 'IP')
    .replace(/resourceVersion: "?[^"\s]+"?/g, 'resourceVersion: RV')
    .replace(/\b(web-[0-9a-f]{6,10})-[a-z0-9]{5}\b/g, '$1-POD')
    .replace(/\b(x\d+ over )?\d+(\.\d+)?(s|m|h|d)(\d+(s|m|h))?\b/g, 'AGE')
    .split('\n')
    .map((line) => line.replace(/\s+$/, '').replace(/ {2,}/g, '  '))
    .join('\n')
    .trim();
}

describeE2e(
  'the same kubectl script through the router and on one apiserver, across a join and a drain',
  () => {
    const env = e2eEnv();
    const cellSetName = `diff-${Date.now()}`;
    const fixture = joinFixture(env);
    const { one, two, three } = fixture;
    // A namespace whose workloads start in the cell that drains: they move at least once.
    const namespace = pickName(`diff-${Date.now()}`, (candidate) =>
      ['web', 'db'].every(
        (name) => fixture.before.route(fixture.before.keyOf({ namespace: candidate, name })).oldCell === one,
      ),
    );
    const plainNamespace = plainNamespaceOf(namespace);
    let started: RebalancedFederation | undefined;
    let kubeconfig: string;

    beforeAll(async () => {
      started = await startJoinFederation(env, fixture, { cellSetName, namespace });
      kubeconfig = join(env.dir, `${cellSetName}.kubeconfig`);
    });

    afterAll(() => stopJoinFederation(env, fixture, started, { cellSetName, namespace }));

    /** Runs the script on both sides; answers what differs, command by command. */
    async function runScript(phase: string): Promise<string[]> {
      const differences: string[] = [];
      for (const step of SCRIPT) {
        if (step.settledOnly && (phase === 'joining' || phase === 'draining')) continue;
        const answers = [];
        for (const [config, ns] of [
          [kubeconfig, namespace],
          [env.controlPlane.kubeconfig, plainNamespace],
        ] as const) {
          const result = await kubectl(config, ['-n', ns, ...step.args(phase)], {
            ...(step.input ? { input: step.input } : {}),
          });
          if (step.observed) await rolloutObserved(config, ns, step.observed);
          let text = normalized(result.out, ns);
          for (const [pattern, replacement] of step.masked ?? []) text = text.replace(pattern, replacement);
          if (step.unordered) text = [...new Set(text.split('\n'))].sort().join('\n');
          answers.push(`exit ${result.code}\n${text}`);
        }
        if (answers[0] !== answers[1])
          differences.push(
            `${phase} / ${step.name}:\n--- through the router\n${answers[0]}\n--- one apiserver\n${answers[1]}`,
          );
      }
      return differences;
    }

    /** Until the pods of both sides' workloads exist, so what the controllers made is there to compare. */
    async function settled(): Promise<void> {
      for (const [config, ns] of [
        [kubeconfig, namespace],
        [env.controlPlane.kubeconfig, plainNamespace],
      ] as const)
        for (const [app, count] of [
          ['web', 2],
          ['db', 1],
        ] as const)
          await eventually(
            `${app}'s ${count} pods in ${ns}`,
            async () => {
              const pods = await kubectl(config, ['-n', ns, 'get', 'pods', '-l', `app=${app}`, '-o', 'name']);
              return pods.out.trim().split('\n').filter(Boolean).length === count ? true : undefined;
            },
            60_000,
          );
    }

    it('answers as one apiserver before, during and after a join and a drain', async () => {
      const differences: string[] = [];
      await kubectl(kubeconfig, ['-n', namespace, 'apply', '-f', '-'], { input: MANIFEST });
      await kubectl(env.controlPlane.kubeconfig, ['-n', plainNamespace, 'apply', '-f', '-'], {
        input: MANIFEST,
      });
      await settled();
      differences.push(...(await runScript('before')));

      const joining = joinThirdCell(env, fixture, cellSetName);
      differences.push(...(await runScript('joining')));
      await joining;
      await settled();
      differences.push(...(await runScript('joined')));

      await drainFirstCell(env, fixture, cellSetName, async () => {
        differences.push(...(await runScript('draining')));
      });
      await settled();
      differences.push(...(await runScript('drained')));
      expect(differences.join('\n\n')).toBe('');
      // The Deployment did move: its copy has another uid in its cell than the one kubectl was shown.
      const shown = await webFields(kubeconfig, namespace, '{.metadata.uid}');
      const drained = RoutingTable.fromCellSet(
        parseCellSetSpec(cellSetSpec({ [two]: 'Normal', [three]: 'Normal' })),
      );
      const home = drained.route(drained.keyOf({ namespace, name: 'web' })).oldCell;
      const stored = await fixture.cells
        .get(home)!
        .request<{ metadata: { uid: string } }>(
          'GET',
          `/apis/apps/v1/namespaces/${namespace}/deployments/web`,
        );
      expect(shown).not.toBe(stored.metadata.uid);
    });
  },
);
