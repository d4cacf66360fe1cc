import { join } from 'node:path';

import { ApiError, type KubeClient } from '@cellfed/controller-kit';
import { type KubeList, type KubeObject } from '@cellfed/federation';

import { eventually } from '../helpers/clients.ts';
import { DEPLOYMENTS, deployment } from '../helpers/deployments.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import {
  joinFixture,
  joinThirdCell,
  pickName,
  plainNamespaceOf,
  startJoinFederation,
  stopJoinFederation,
} from '../helpers/join-fixture.ts';
import { kubectl } from '../helpers/router-process.ts';
import type { RebalancedFederation } from '../helpers/scratch-federation.ts';

/**
 * A cell's own controllers make ReplicaSets, Pods, Events and EndpointSlices for the workloads it runs, under
 * names the router never sees chosen. Through the router they are found where they are, and kubectl shows
 * them as it shows one apiserver's: the control plane, which runs its own kube-controller-manager, runs the
 * same Deployment in a namespace of its own for comparison.
 */
/** A workload's pod template, as far as quiescing a DaemonSet changes it. */
interface PodTemplateOwner {
  template: { spec: { nodeSelector?: Record<string, string> } };
}

/** On an old copy the rebalance controller quiesced (its own package's QUIESCED_ANNOTATION). */
const QUIESCED_ANNOTATION = 'cellfed.io/quiesced-from';

describeE2e('what a cell makes for a workload is visible through the router', () => {
  const env = e2eEnv();
  const cellSetName = `made-${Date.now()}`;
  const namespace = `made-${Date.now()}`;
  const plainNamespace = plainNamespaceOf(namespace);
  const fixture = joinFixture(env);
  const { three, before, after, plain, cells } = fixture;
  let started: RebalancedFederation | undefined;
  let routed: KubeClient;
  let kubeconfig: string;

  const cellOf = (name: string) => before.route(before.keyOf({ namespace, name })).oldCell;
  const workload = (name: string) => {
    const made = deployment(name);
    return { ...made, spec: { ...made.spec, replicas: 2 } };
  };
  const createIn = (client: KubeClient, ns: string, name: string) =>
    client.request<KubeObject>('POST', `${DEPLOYMENTS}/namespaces/${ns}/deployments`, {
      body: workload(name),
    });
  /** kubectl through the router (or, with `ns` the plain namespace, straight to the control plane). */
  const run = async (args: string[], ns = namespace) => {
    const file = ns === plainNamespace ? env.controlPlane.kubeconfig : kubeconfig;
    const result = await kubectl(file, ['-n', ns, ...args]);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.out}`);
    return result.out.trim();
  };
  const names = async (args: string[], ns = namespace) =>
    (await run([...args, '-o', 'name'], ns))
      .split('\n')
      .filter((line) => line !== '')
      .sort();
  const replicaSetsIn = async (client: KubeClient, app: string) =>
    (
      await client.request<KubeList>(
        'GET',
        `${DEPLOYMENTS}/namespaces/${namespace}/replicasets?labelSelector=app%3D${app}`,
      )
    ).items.map((item) => item.metadata.name!);
  /** Waits until `app`'s Pods, through `ns`'s kubectl, are `count`. */
  const podsOf = (app: string, count: number, ns = namespace) =>
    eventually(
      `${count} Pods of ${app} in ${ns}`,
      async () => {
        const pods = await names(['get', 'pods', '-l', `app=${app}`], ns);
        return pods.length === count ? pods : undefined;
      },
      60_000,
    );

  beforeAll(async () => {
    started = await startJoinFederation(env, fixture, { cellSetName, namespace });
    routed = started.federation.routed;
    kubeconfig = join(env.dir, `${cellSetName}.kubeconfig`);
  });

  afterAll(() => stopJoinFederation(env, fixture, started, { cellSetName, namespace }));

  it('kubectl get rs,pods, describe and rollout history show what the Deployment’s cell made, as one apiserver does', async () => {
    await createIn(routed, namespace, 'web');
    await createIn(plain, plainNamespace, 'web');
    const pods = await podsOf('web', 2);
    const plainPods = await podsOf('web', 2, plainNamespace);
    // The ReplicaSet's name hashes the Pod template: the same in the cell as on one apiserver.
    const replicaSets = await names(['get', 'rs', '-l', 'app=web']);
    expect(replicaSets).toEqual(await names(['get', 'rs', '-l', 'app=web'], plainNamespace));
    expect(replicaSets).toHaveLength(1);
    expect(await replicaSetsIn(cells.get(cellOf('web'))!, 'web')).toEqual([
      replicaSets[0]!.replace('replicaset.apps/', ''),
    ]);
    // Pod names end in random letters: their ReplicaSet part is what compares.
    const stem = (pod: string) => pod.replace(/-[a-z0-9]{5}$/, '');
    expect(pods.map(stem)).toEqual(plainPods.map(stem));

    // Single objects by name, and their owners, as kubectl reads them.
    const replicaSet = replicaSets[0]!.replace('replicaset.apps/', '');
    expect(await run(['get', 'rs', replicaSet, '-o', 'jsonpath={.metadata.ownerReferences[0].name}'])).toBe(
      'web',
    );
    const pod = pods[0]!.replace('pod/', '');
    expect(await run(['get', 'pod', pod, '-o', 'jsonpath={.metadata.ownerReferences[0].name}'])).toBe(
      replicaSet,
    );

    const described = await run(['describe', 'deployment', 'web']);
    expect(described).toContain(`NewReplicaSet:   ${replicaSet} (2/2 replicas created)`);
    expect(described).toMatch(/ScalingReplicaSet +\S+ +deployment-controller +Scaled up replica set/);
    expect(await run(['rollout', 'history', 'deployment/web'])).toBe(
      await run(['rollout', 'history', 'deployment/web'], plainNamespace),
    );
    const events = await run(['get', 'events', '--field-selector', 'involvedObject.kind=ReplicaSet']);
    expect(events).toContain(`replicaset/${replicaSet}`);
    expect(events).toContain('SuccessfulCreate');
    // The control plane's own Events (its controllers', cellfed's) are listed beside the cells'.
    const plainEvent = 'made-by-a-control-plane-controller';
    await plain.request('POST', `/api/v1/namespaces/${namespace}/events`, {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: plainEvent },
        involvedObject: { kind: 'ConfigMap', namespace, name: 'settings', apiVersion: 'v1' },
        reason: 'Checked',
        message: 'an event the control plane holds',
        type: 'Normal',
      },
    });
    expect(await names(['get', 'events'])).toContain(`event/${plainEvent}`);
  });

  it('a Pod is deleted where it is; a Pod a client creates goes to its name’s cell; no Pod is found nowhere', async () => {
    await createIn(routed, namespace, 'api');
    const [gone] = await podsOf('api', 2);
    await run(['delete', gone!]);
    // Its ReplicaSet makes another, in the same cell.
    await eventually(
      'a new Pod in place of the deleted one',
      async () => {
        const pods = await names(['get', 'pods', '-l', 'app=api']);
        return pods.length === 2 && !pods.includes(gone!) ? true : undefined;
      },
      60_000,
    );

    const debug = pickName('debug', (name) => cellOf(name) !== cellOf('api'));
    await run(['run', debug, '--image=busybox', '--restart=Never', '--', 'sleep', '1d']);
    const stored = await cells
      .get(cellOf(debug))!
      .request<KubeObject>('GET', `/api/v1/namespaces/${namespace}/pods/${debug}`);
    expect(stored.metadata.name).toBe(debug);
    expect(await run(['get', 'pod', debug, '-o', 'jsonpath={.spec.containers[0].image}'])).toBe('busybox');

    const missing = await kubectl(kubeconfig, ['-n', namespace, 'get', 'pod', 'no-such-pod']);
    expect(missing.code).not.toBe(0);
    expect(missing.out).toContain('pods "no-such-pod" not found');
    const viaApi = await routed
      .request('GET', `/api/v1/namespaces/${namespace}/pods/no-such-pod`)
      .catch((error: unknown) => error);
    expect(viaApi).toBeInstanceOf(ApiError);
    expect((viaApi as ApiError).statusCode).toBe(404);
  });

  it('a CronJob’s Jobs are listed, watched, read and deleted through the router from the cell that made them, wherever the ring puts their names', async () => {
    // A CronJob names its Jobs <cronjob>-<scheduled minute>: a name whose coming minutes' Jobs the ring
    // places in another cell than the CronJob's, so the router must find them where they were made.
    const minute = Math.floor(Date.now() / 60_000);
    const cron = pickName('every-minute', (name) =>
      [0, 1, 2, 3, 4].every((k) => cellOf(`${name}-${minute + k}`) !== cellOf(name)),
    );
    const jobs = `/apis/batch/v1/namespaces/${namespace}/jobs`;
    const listed = await routed.request<KubeList>('GET', jobs);
    const abort = new AbortController();
    const events = await routed.watch(jobs, {
      query: { resourceVersion: listed.metadata.resourceVersion!, timeoutSeconds: 240 },
      signal: abort.signal,
    });
    const watched: string[] = [];
    const watching = (async () => {
      for await (const event of events)
        watched.push(`${event.type} ${(event.object as KubeObject).metadata.name}`);
    })().catch(() => undefined);
    const cronJobs = `/apis/batch/v1/namespaces/${namespace}/cronjobs`;
    await routed.request('POST', cronJobs, {
      body: {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: cron },
        spec: {
          schedule: '* * * * *',
          concurrencyPolicy: 'Forbid',
          jobTemplate: {
            spec: {
              template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
            },
          },
        },
      },
    });
    try {
      // Made by the CronJob's cell, at the next minute.
      const home = cells.get(cellOf(cron))!;
      const job = await eventually(
        `a Job of ${cron} in cell ${cellOf(cron)}`,
        async () =>
          (await home.request<KubeList>('GET', jobs)).items.find((item) =>
            (item.metadata.ownerReferences as { name?: string }[] | undefined)?.some(
              (owner) => owner.name === cron,
            ),
          )?.metadata.name,
        100_000,
      );
      expect(cellOf(job)).not.toBe(cellOf(cron));
      expect(await names(['get', 'jobs'])).toContain(`job.batch/${job}`);
      expect(await run(['get', 'jobs'])).toContain(job);
      expect(
        await run([
          'get',
          'job',
          job,
          '-o',
          'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}',
        ]),
      ).toBe(`CronJob/${cron}`);
      const protobuf = await routed.raw('GET', jobs, {
        headers: { accept: 'application/vnd.kubernetes.protobuf' },
      });
      expect(protobuf.statusCode).toBe(200);
      expect(Buffer.from(await protobuf.body.arrayBuffer()).includes(Buffer.from(job))).toBe(true);
      await eventually('the watch to show the Job', async () =>
        watched.includes(`ADDED ${job}`) ? true : undefined,
      );

      await run(['delete', 'job', job, '--wait=false']);
      await eventually(`${job} gone from cell ${cellOf(cron)}`, async () =>
        (await home.request<KubeList>('GET', jobs)).items.some((item) => item.metadata.name === job)
          ? undefined
          : true,
      );
      await eventually('the watch to show its deletion', async () =>
        watched.includes(`DELETED ${job}`) ? true : undefined,
      );
      expect(watched.filter((line) => line === `ADDED ${job}`)).toHaveLength(1);
    } finally {
      abort.abort();
      await watching;
      // It must make no more Jobs during the join that follows.
      await routed.request('DELETE', `${cronJobs}/${cron}`, { query: { propagationPolicy: 'Background' } });
    }
  });

  it('after a join moves a Deployment, its ReplicaSet shows once, from the cell that holds the Deployment', async () => {
    const moving = pickName(
      'moving',
      (name) => after.route(after.keyOf({ namespace, name })).newCell === three,
    );
    const cron = pickName(
      'nightly',
      (name) => after.route(after.keyOf({ namespace, name })).newCell === three,
    );
    await createIn(routed, namespace, moving);
    await routed.request('POST', `/apis/batch/v1/namespaces/${namespace}/cronjobs`, {
      body: {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: cron },
        spec: {
          schedule: '0 3 * * *',
          jobTemplate: {
            spec: {
              template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
            },
          },
        },
      },
    });
    const agent = pickName(
      'agent',
      (name) => after.route(after.keyOf({ namespace, name })).newCell === three,
    );
    const daemonSets = `${DEPLOYMENTS}/namespaces/${namespace}/daemonsets`;
    await routed.request('POST', daemonSets, {
      body: {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: agent },
        spec: {
          selector: { matchLabels: { app: agent } },
          template: {
            metadata: { labels: { app: agent } },
            spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      },
    });
    const report = pickName(
      'report',
      (name) => after.route(after.keyOf({ namespace, name })).newCell === three,
    );
    await routed.request('POST', `/apis/batch/v1/namespaces/${namespace}/jobs`, {
      body: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: report },
        spec: {
          parallelism: 1,
          completions: 1,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
    });
    const jobPodsIn = async (client: KubeClient) =>
      (
        await client.request<KubeList>('GET', `/api/v1/namespaces/${namespace}/pods`, {
          query: { labelSelector: `batch.kubernetes.io/job-name=${report}` },
        })
      ).items;
    await eventually(`the pod of Job ${report}`, async () =>
      (await jobPodsIn(routed)).length === 1 ? true : undefined,
    );
    await podsOf(moving, 2);
    const [replicaSet] = await names(['get', 'rs', '-l', `app=${moving}`]);

    // While it moves, kubectl never lists the ReplicaSet twice; once the move is committed, the old cell
    // runs its old copies no more (the Deployment scaled to 0, the CronJob suspended, the DaemonSet on no
    // node) until they are deleted.
    const seen = new Set<number>();
    const quiesced = { deployment: false, cronJob: false, daemonSet: false };
    let jobMigratedAt: string | undefined;
    const oldCopy = (path: string) =>
      cells
        .get(cellOf(moving))!
        .request<KubeObject & { spec: { replicas?: number; suspend?: boolean } }>('GET', path)
        .catch(() => undefined);
    await joinThirdCell(env, fixture, cellSetName, async () => {
      seen.add((await names(['get', 'rs', '-l', `app=${moving}`])).length);
      const deploymentCopy = await oldCopy(`${DEPLOYMENTS}/namespaces/${namespace}/deployments/${moving}`);
      if (deploymentCopy?.metadata.annotations?.[QUIESCED_ANNOTATION] === '{"replicas":2}')
        quiesced.deployment ||= deploymentCopy.spec.replicas === 0;
      const cronCopy = await cells
        .get(before.route(before.keyOf({ namespace, name: cron })).oldCell)!
        .request<KubeObject & { spec: { suspend?: boolean } }>(
          'GET',
          `/apis/batch/v1/namespaces/${namespace}/cronjobs/${cron}`,
        )
        .catch(() => undefined);
      if (cronCopy?.metadata.annotations?.[QUIESCED_ANNOTATION] !== undefined)
        quiesced.cronJob ||= cronCopy.spec.suspend === true;
      const daemonSetCopy = await cells
        .get(before.route(before.keyOf({ namespace, name: agent })).oldCell)!
        .request<KubeObject & { spec: PodTemplateOwner }>('GET', `${daemonSets}/${agent}`)
        .catch(() => undefined);
      const oldJob = await cells
        .get(cellOf(report))!
        .request<KubeObject>('GET', `/apis/batch/v1/namespaces/${namespace}/jobs/${report}`)
        .catch(() => undefined);
      jobMigratedAt ??= oldJob?.metadata.annotations?.['cellfed.io/migrated-at'];
      if (daemonSetCopy?.metadata.annotations?.[QUIESCED_ANNOTATION] === '{"nodeSelector":{"disk":"ssd"}}')
        quiesced.daemonSet ||=
          daemonSetCopy.spec.template.spec.nodeSelector?.['cellfed.io/quiesced'] === 'true';
    });
    expect(quiesced).toEqual({ deployment: true, cronJob: true, daemonSet: true });
    // The DaemonSet runs from its new cell where it ran (selecting the nodes it selected).
    /** The new copy of what moved, read in its new cell. */
    const newCopy = <Spec>(path: string) =>
      cells.get(three)!.request<KubeObject & { spec: Spec }>('GET', path);
    const movedAgent = await newCopy<PodTemplateOwner>(`${daemonSets}/${agent}`);
    expect(movedAgent.spec.template.spec.nodeSelector).toEqual({ disk: 'ssd' });
    // The CronJob runs from its new cell, as it was.
    const moved = await newCopy<{ suspend?: boolean }>(
      `/apis/batch/v1/namespaces/${namespace}/cronjobs/${cron}`,
    );
    expect(moved.spec.suspend).toBe(false);
    // The Job ran in its new cell only once its move was committed (its copy was created suspended), and
    // no pod of it runs on anywhere without an owner: one pod, in its new cell, owned by the Job.
    expect(jobMigratedAt).toBeDefined();
    const jobPods = await eventually(`the one pod of ${report}, in ${three}`, async () => {
      const [inOld, inNew, shown] = await Promise.all([
        jobPodsIn(cells.get(cellOf(report))!),
        jobPodsIn(cells.get(three)!),
        jobPodsIn(routed),
      ]);
      return inOld.length === 0 && inNew.length === 1 && shown.length === 1 ? inNew : undefined;
    });
    const created = Date.parse(jobPods[0]!.metadata.creationTimestamp!);
    expect(created).toBeGreaterThanOrEqual(Math.floor(Date.parse(jobMigratedAt!) / 1000) * 1000);
    expect(jobPods[0]!.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Job', name: report, controller: true }),
    ]);
    const movedJob = await newCopy<{ suspend?: boolean }>(
      `/apis/batch/v1/namespaces/${namespace}/jobs/${report}`,
    );
    expect(movedJob.spec.suspend).toBe(false);
    expect(movedJob.metadata.annotations?.['cellfed.io/held-spec']).toBeUndefined();
    await eventually(
      `${cellOf(moving)}'s copy of ${replicaSet} to be collected after the move`,
      async () => ((await replicaSetsIn(cells.get(cellOf(moving))!, moving)).length === 0 ? true : undefined),
      60_000,
    );
    expect(await replicaSetsIn(cells.get(three)!, moving)).toEqual([
      replicaSet!.replace('replicaset.apps/', ''),
    ]);
    expect(await names(['get', 'rs', '-l', `app=${moving}`])).toEqual([replicaSet]);
    expect([...seen]).toEqual([1]);
    await podsOf(moving, 2);

    // The new ReplicaSet names the new copy's uid in its cell; kubectl, which matches ReplicaSets to their
    // Deployment by the uid it knows, still finds it.
    const name = replicaSet!.replace('replicaset.apps/', '');
    const known = await routed.request<KubeObject>(
      'GET',
      `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${moving}`,
    );
    const inCell = await cells
      .get(three)!
      .request<KubeObject>('GET', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${moving}`);
    expect(inCell.metadata.uid).not.toBe(known.metadata.uid);
    const shown = await routed.request<KubeObject>(
      'GET',
      `${DEPLOYMENTS}/namespaces/${namespace}/replicasets/${name}`,
    );
    expect((shown.metadata.ownerReferences as { uid: string }[] | undefined)?.[0]?.uid).toBe(
      known.metadata.uid,
    );
    expect(await run(['describe', 'deployment', moving])).toContain(
      `NewReplicaSet:   ${name} (2/2 replicas created)`,
    );
    expect(await run(['rollout', 'history', `deployment/${moving}`])).toContain('1         <none>');
    // An update of what the client read goes back with the cell's uid: the cell's collector keeps it.
    const updated = {
      ...shown,
      metadata: { ...shown.metadata, labels: { ...shown.metadata.labels, checked: 'yes' } },
    };
    await routed.request('PUT', `${DEPLOYMENTS}/namespaces/${namespace}/replicasets/${name}`, {
      body: updated,
    });
    const stored = await cells
      .get(three)!
      .request<KubeObject>('GET', `${DEPLOYMENTS}/namespaces/${namespace}/replicasets/${name}`);
    expect(stored.metadata.labels?.['checked']).toBe('yes');
    expect((stored.metadata.ownerReferences as { uid: string }[] | undefined)?.[0]?.uid).toBe(
      inCell.metadata.uid,
    );
    // What the new cell's controllers record about the copy names the copy's uid there; kubectl describe
    // asks for the events of the uid it knows, and finds them.
    await run(['patch', 'deployment', moving, '-p', '{"spec":{"replicas":3}}']);
    await eventually(
      `describe deployment ${moving} to show the scale-up its new cell recorded`,
      async () =>
        /Scaled up replica set \S+ (from 2 to 3|to 3 from 2)/.test(
          await run(['describe', 'deployment', moving]),
        )
          ? true
          : undefined,
      30_000,
    );
  });
});
