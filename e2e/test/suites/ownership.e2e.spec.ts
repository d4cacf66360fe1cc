import { HELD_OWNERS_ANNOTATION, ORIGIN_UID_ANNOTATION } from '@cellfed/api';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ApiError, KubeClient } from '@cellfed/controller-kit';
import { type KubeList, type KubeObject } from '@cellfed/federation';

import { eventually } from '../helpers/clients.ts';
import { DEPLOYMENTS, deployment } from '../helpers/deployments.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { closeJoinFixture, joinFixture, joinThirdCell, pickName } from '../helpers/join-fixture.ts';
import { kubectl } from '../helpers/router-process.ts';
import {
  startRebalancedFederation,
  stopRebalancedFederation,
  type RebalancedFederation,
} from '../helpers/scratch-federation.ts';

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/**
 * A cellular object's owners are often not in its cell: another cell (their keys hash elsewhere), the control
 * plane (a ServiceAccount), or the cell under another uid (after a move). Each cell's own garbage collector
 * would delete such an object within seconds. These tests write owner references through the router, as
 * kubectl and controllers do, and compare what happens with the same writes on one plain apiserver (the
 * control plane, which runs its own kube-controller-manager).
 */
describeE2e('owners and dependents across cells: nothing lost to a cell’s garbage collector', () => {
  const env = e2eEnv();
  const cellSetName = `owners-${Date.now()}`;
  const namespace = `owners-${Date.now()}`;
  const fixture = joinFixture(env);
  const { one, two, three, TWO_CELLS, before, after, plain, cells } = fixture;
  let started: RebalancedFederation | undefined;
  let routed: KubeClient;
  let kubeconfig: string;

  const cellOf = (name: string) => before.route(before.keyOf({ namespace, name })).oldCell;
  const cell = (id: string) => cells.get(id)!;
  const configMapPath = (name = '') => `/api/v1/namespaces/${namespace}/configmaps${name ? `/${name}` : ''}`;
  const deploymentPath = (name = '') =>
    `${DEPLOYMENTS}/namespaces/${namespace}/deployments${name ? `/${name}` : ''}`;
  const configMap = (name: string, ownerReferences: OwnerReference[]) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ownerReferences },
    data: { owned: 'yes' },
  });
  const ownerOf = (object: KubeObject, controller = true): OwnerReference => ({
    apiVersion: object.apiVersion!,
    kind: object.kind!,
    name: object.metadata.name!,
    uid: object.metadata.uid!,
    ...(controller ? { controller: true, blockOwnerDeletion: true } : {}),
  });
  const found = (client: KubeClient, path: string) =>
    client.request<KubeObject>('GET', path).catch((error: unknown) => {
      if (error instanceof ApiError && error.statusCode === 404) return undefined;
      throw error;
    });
  const untilGone = (what: string, client: KubeClient, path: string, timeoutMs = 60_000) =>
    eventually(what, async () => ((await found(client, path)) ? undefined : true), timeoutMs);
  const createDeployment = (client: KubeClient, name: string) =>
    client.request<KubeObject>('POST', deploymentPath(), { body: deployment(name) });

  /**
   * Proves a cell's garbage collector has looked at owner references to `owners` and deleted what it
   * could not resolve: the same references written straight into the cell, past the router, disappear.
   */
  /**
   * `kubectl delete <owner> --cascade=orphan` through `client` (the router, or the plain apiserver), then
   * what is left of the dependent `kept` past a few collector passes (2 s apart here): an owner gone would
   * have got its only dependent collected by then.
   */
  async function afterOrphaning(
    client: KubeClient,
    owner: [kind: string, name: string],
    ownerPath: string,
    kept: string,
  ) {
    const config = client === routed ? kubeconfig : env.controlPlane.kubeconfig;
    const result = await kubectl(config, ['-n', namespace, 'delete', ...owner, '--cascade=orphan']);
    expect(result).toMatchObject({ code: 0 });
    await untilGone(`the orphaning ${owner.join(' ')} to go`, client, ownerPath);
    await sleep(7000);
    return found(client, configMapPath(kept));
  }

  async function cellCollectorHasRun(id: string, owners: OwnerReference[]) {
    const control = `control-${Math.random().toString(36).slice(2, 8)}`;
    await cell(id).request('POST', configMapPath(), { body: configMap(control, owners) });
    await untilGone(
      `the control ConfigMap ${control} to be collected by ${id}`,
      cell(id),
      configMapPath(control),
    );
  }

  beforeAll(async () => {
    started = await startRebalancedFederation(
      env,
      { cellSetName, spec: TWO_CELLS, namespace, deployments: [], cells: [one, two] },
      ['--collector-resync', '2s', '--delete-after', '4s', '--mirror-resync', '2s'],
    );
    routed = started.federation.routed;
    kubeconfig = join(env.dir, `${cellSetName}.kubeconfig`);
  });

  afterAll(async () => {
    await stopRebalancedFederation(env, started, { cellSetName, namespace });
    await closeJoinFixture(fixture);
  });

  it('a ConfigMap owned by a Deployment in another cell outlives the cell’s collector and shows its owner references', async () => {
    const web = await createDeployment(routed, 'web');
    const name = pickName('settings', (candidate) => cellOf(candidate) !== cellOf('web'));
    const owners = [ownerOf(web)];
    await routed.request('POST', configMapPath(), { body: configMap(name, owners) });
    await cellCollectorHasRun(cellOf(name), owners);

    const shown = await routed.request<KubeObject>('GET', configMapPath(name));
    expect(shown.metadata.ownerReferences).toEqual(owners);
    expect(shown.metadata.annotations?.[HELD_OWNERS_ANNOTATION]).toBeUndefined();
    const listed = await routed.request<KubeList>('GET', configMapPath());
    expect(listed.items.find((item) => item.metadata.name === name)?.metadata.ownerReferences).toEqual(
      owners,
    );
    // In the cell, out of its collector's sight.
    const stored = await cell(cellOf(name)).request<KubeObject>('GET', configMapPath(name));
    expect(stored.metadata.ownerReferences).toBeUndefined();
    expect(JSON.parse(stored.metadata.annotations![HELD_OWNERS_ANNOTATION]!)).toEqual(owners);

    // One plain apiserver keeps the same pair and shows the same references.
    const plainWeb = await createDeployment(plain, 'web');
    await plain.request('POST', configMapPath(), { body: configMap(name, [ownerOf(plainWeb)]) });
    const plainShown = await plain.request<KubeObject>('GET', configMapPath(name));
    const withoutUid = (list: unknown) => (list as OwnerReference[]).map(({ uid: _uid, ...rest }) => rest);
    expect(withoutUid(shown.metadata.ownerReferences)).toEqual(
      withoutUid(plainShown.metadata.ownerReferences),
    );
  });

  it('every patch type and server-side apply keep owner references held, as kubectl sees them', async () => {
    const api = await createDeployment(routed, 'api');
    const name = pickName('patched', (candidate) => cellOf(candidate) !== cellOf('api'));
    await routed.request('POST', configMapPath(), { body: configMap(name, []) });
    const owner = ownerOf(api, false);
    const refs = async () =>
      (await routed.request<KubeObject>('GET', configMapPath(name))).metadata.ownerReferences;

    let result = await kubectl(kubeconfig, [
      '-n',
      namespace,
      'patch',
      'configmap',
      name,
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { ownerReferences: [owner] } }),
    ]);
    expect(result).toMatchObject({ code: 0 });
    expect(await refs()).toEqual([owner]);
    result = await kubectl(kubeconfig, [
      '-n',
      namespace,
      'patch',
      'configmap',
      name,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'add', path: '/metadata/ownerReferences/0/controller', value: true }]),
    ]);
    expect(result).toMatchObject({ code: 0 });
    expect(await refs()).toEqual([{ ...owner, controller: true }]);
    result = await kubectl(kubeconfig, [
      '-n',
      namespace,
      'patch',
      'configmap',
      name,
      '-p',
      JSON.stringify({ metadata: { ownerReferences: [{ uid: owner.uid, $patch: 'delete' }] } }),
    ]);
    expect(result).toMatchObject({ code: 0 });
    expect(await refs()).toBeUndefined();
    const applied = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n  ownerReferences:\n  - apiVersion: apps/v1\n    kind: Deployment\n    name: api\n    uid: ${owner.uid}\ndata:\n  owned: applied\n`;
    result = await kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', '-'], {
      input: applied,
    });
    expect(result).toMatchObject({ code: 0 });
    expect(await refs()).toEqual([owner]);
    await cellCollectorHasRun(cellOf(name), [owner]);
    expect(await found(routed, configMapPath(name))).toBeDefined();
  });

  it('kubectl create job --from=cronjob: the Job lives in its own cell and keeps its CronJob owner', async () => {
    const cron = 'nightly';
    const job = pickName('manual', (candidate) => cellOf(candidate) !== cellOf(cron));
    const cronJob = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: cron },
      spec: {
        schedule: '0 0 1 1 *',
        suspend: true,
        jobTemplate: {
          spec: {
            template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
          },
        },
      },
    };
    const created = await routed.request<KubeObject>(
      'POST',
      `/apis/batch/v1/namespaces/${namespace}/cronjobs`,
      { body: cronJob },
    );
    expect(
      await kubectl(kubeconfig, ['-n', namespace, 'create', 'job', job, `--from=cronjob/${cron}`]),
    ).toMatchObject({ code: 0 });
    await cellCollectorHasRun(cellOf(job), [ownerOf(created)]);
    const shown = await routed.request<KubeObject>(
      'GET',
      `/apis/batch/v1/namespaces/${namespace}/jobs/${job}`,
    );
    expect(shown.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'CronJob', name: cron, uid: created.metadata.uid, controller: true }),
    ]);
  });

  it('owned by a ServiceAccount of the control plane: kept while it exists, collected when it goes, as on one apiserver', async () => {
    const accountPath = `/api/v1/namespaces/${namespace}/serviceaccounts`;
    const account = await routed.request<KubeObject>('POST', accountPath, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } },
    });
    const name = pickName('token-cache', () => true);
    const owners = [ownerOf(account, false)];
    await routed.request('POST', configMapPath(), { body: configMap(name, owners) });
    await cellCollectorHasRun(cellOf(name), owners);
    expect(await found(routed, configMapPath(name))).toBeDefined();

    await routed.request('DELETE', `${accountPath}/builder`);
    await untilGone(
      'the ConfigMap owned by the deleted ServiceAccount to be collected',
      routed,
      configMapPath(name),
    );
  });

  it('kubectl delete deployment, background and foreground, removes dependents in every cell (foreground: before the owner)', async () => {
    for (const [owner, cascade] of [
      ['shop', 'background'],
      ['cart', 'foreground'],
    ] as const) {
      const created = await createDeployment(routed, owner);
      const dependents = [one, two].map((id) =>
        pickName(`${owner}-part`, (candidate) => cellOf(candidate) === id),
      );
      for (const name of dependents)
        await routed.request('POST', configMapPath(), { body: configMap(name, [ownerOf(created)]) });
      const result = await kubectl(kubeconfig, [
        '-n',
        namespace,
        'delete',
        'deployment',
        owner,
        `--cascade=${cascade}`,
      ]);
      expect(result).toMatchObject({ code: 0 });
      // Foreground: kubectl returns once the owner is gone, which on one apiserver is after its dependents.
      if (cascade === 'foreground')
        for (const name of dependents) expect(await found(routed, configMapPath(name))).toBeUndefined();
      for (const name of dependents)
        await untilGone(`${name} to go with its ${cascade}-deleted owner`, routed, configMapPath(name));
    }
  });

  it('kubectl delete deployment --cascade=orphan keeps its only dependent, without the reference, as on one apiserver', async () => {
    const results = [];
    for (const client of [routed, plain]) {
      const owner = await createDeployment(client, 'keeper');
      const kept = pickName('keeper-part', (candidate) => cellOf(candidate) !== cellOf('keeper'));
      await client.request('POST', configMapPath(), { body: configMap(kept, [ownerOf(owner)]) });
      results.push(await afterOrphaning(client, ['deployment', 'keeper'], deploymentPath('keeper'), kept));
    }
    expect(
      results.map((object) => object && { owners: object.metadata.ownerReferences, data: object['data'] }),
    ).toEqual([
      { owners: undefined, data: { owned: 'yes' } },
      { owners: undefined, data: { owned: 'yes' } },
    ]);
  });

  it('kubectl delete serviceaccount --cascade=orphan keeps what it owned in a cell, without the reference, as on one apiserver', async () => {
    const accountPath = `/api/v1/namespaces/${namespace}/serviceaccounts`;
    const results = [];
    for (const client of [routed, plain]) {
      const account = await client.request<KubeObject>('POST', accountPath, {
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'orphaning' } },
      });
      const kept = pickName('orphaning-part', () => true);
      const owners = [ownerOf(account, false)];
      await client.request('POST', configMapPath(), { body: configMap(kept, owners) });
      if (client === routed) await cellCollectorHasRun(cellOf(kept), owners);
      results.push(
        await afterOrphaning(client, ['serviceaccount', 'orphaning'], `${accountPath}/orphaning`, kept),
      );
      await client.request('DELETE', configMapPath(kept));
    }
    expect(
      results.map((object) => object && { owners: object.metadata.ownerReferences, data: object['data'] }),
    ).toEqual([
      { owners: undefined, data: { owned: 'yes' } },
      { owners: undefined, data: { owned: 'yes' } },
    ]);
  });

  it('owner references survive a migration of the dependent and of its owner', async () => {
    // An owner and a dependent that both move into the joining cell, and a dependent that stays.
    const moves = (name: string) => after.route(after.keyOf({ namespace, name })).newCell === three;
    const owner = pickName('mover', moves);
    const created = await createDeployment(routed, owner);
    const moving = pickName('mover-cfg', moves);
    const staying = pickName('mover-cfg', (name) => !moves(name));
    const owners = [ownerOf(created)];
    for (const name of [moving, staying])
      await routed.request('POST', configMapPath(), { body: configMap(name, owners) });
    // The copy is then at least 2 s younger than the object clients know, which the AGE check below tells.
    await sleep(2000);

    await joinThirdCell(env, fixture, cellSetName);
    // The moved owner has a new uid in its new cell; clients and the collector know it by the old one.
    const movedOwner = await cell(three).request<KubeObject>('GET', deploymentPath(owner));
    expect(movedOwner.metadata.uid).not.toBe(created.metadata.uid);
    expect(movedOwner.metadata.annotations?.[ORIGIN_UID_ANNOTATION]).toBe(created.metadata.uid);
    // Past the old copies' deletion and several collector passes.
    await sleep(8000);
    for (const name of [moving, staying]) {
      const shown = await routed.request<KubeObject>('GET', configMapPath(name));
      expect(shown.metadata.ownerReferences).toEqual(owners);
    }
    expect(await found(cell(three), configMapPath(moving))).toBeDefined();

    // What a controller does with the moved owner it read through the router: update it, and its status.
    // Both land (the cell would refuse the uid it is shown by) and the copy keeps its identity, which
    // clients never see.
    const read = await routed.request<KubeObject>('GET', deploymentPath(owner));
    expect(read.metadata.uid).toBe(created.metadata.uid);
    expect(read.metadata.annotations?.[ORIGIN_UID_ANNOTATION]).toBeUndefined();
    const updated = await routed.request<KubeObject>('PUT', deploymentPath(owner), {
      body: { ...read, metadata: { ...read.metadata, labels: { ...read.metadata.labels, updated: 'yes' } } },
    });
    await routed.request('PUT', `${deploymentPath(owner)}/status`, { body: updated });
    const kept = await cell(three).request<KubeObject>('GET', deploymentPath(owner));
    expect(kept.metadata.labels?.['updated']).toBe('yes');
    expect(kept.metadata.annotations?.[ORIGIN_UID_ANNOTATION]).toBe(created.metadata.uid);
    expect((await routed.request<KubeObject>('GET', deploymentPath(owner))).metadata.uid).toBe(
      created.metadata.uid,
    );

    // `kubectl get` prints the AGE of the object clients know, not of its copy, in one row and in a list.
    const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
    interface Table {
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[]; object: { metadata: { name: string } } }[];
    }
    const ageOf = (table: Table) => {
      const column = table.columnDefinitions.findIndex((definition) => definition.name === 'Age');
      const row = table.rows.find((candidate) => candidate.object.metadata.name === owner)!;
      const printed = String(row.cells[column]);
      expect(printed).toMatch(/^\d+s$/);
      return Number(printed.slice(0, -1));
    };
    const sinceCreated = () => (Date.now() - Date.parse(created.metadata.creationTimestamp!)) / 1000;
    const one = ageOf(await routed.request<Table>('GET', deploymentPath(owner), { accept: TABLE }));
    expect(Math.abs(one - sinceCreated())).toBeLessThanOrEqual(2);
    const listed = ageOf(await routed.request<Table>('GET', deploymentPath(), { accept: TABLE }));
    expect(Math.abs(listed - sinceCreated())).toBeLessThanOrEqual(2);
    const inCell = ageOf(await cell(three).request<Table>('GET', deploymentPath(owner), { accept: TABLE }));
    expect(inCell).toBeLessThan(listed);
  });
});
