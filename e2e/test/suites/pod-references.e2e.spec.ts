import { FOLLOWER_LABEL } from '@cellfed/api';
import { ApiError, type KubeClient } from '@cellfed/controller-kit';
import { type KubeList, type KubeObject } from '@cellfed/federation';

import { eventually } from '../helpers/clients.ts';
import { DEPLOYMENTS, deployment } from '../helpers/deployments.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import {
  joinFixture,
  joinThirdCell,
  pickName,
  startJoinFederation,
  stopJoinFederation,
} from '../helpers/join-fixture.ts';
import type { RebalancedFederation } from '../helpers/scratch-federation.ts';

/**
 * A cell's kubelets read a pod's ConfigMaps and Secrets from the cell's own apiserver, while the router puts a
 * ConfigMap in the cell its own name hashes to and a Secret in the control plane. These tests write a
 * Deployment and what its template names through the router, and look into the real cells for the follower
 * copies the rebalance controller keeps next to the workload: made, kept in step, hidden from clients, moved
 * with the workload through a join, and written over by the ConfigMap's own move.
 */
describeE2e('what a workload’s pods need is in the workload’s cell', () => {
  const env = e2eEnv();
  const cellSetName = `podrefs-${Date.now()}`;
  const namespace = `podrefs-${Date.now()}`;
  const fixture = joinFixture(env);
  const { three, before, after, plain, cells } = fixture;
  let started: RebalancedFederation | undefined;
  let routed: KubeClient;

  const beforeCell = (name: string) => before.route(before.keyOf({ namespace, name })).oldCell;
  const afterCell = (name: string) => after.route(after.keyOf({ namespace, name })).newCell;
  const cell = (id: string) => cells.get(id)!;
  const configMapPath = (name = '') => `/api/v1/namespaces/${namespace}/configmaps${name ? `/${name}` : ''}`;
  const secretPath = (name = '') => `/api/v1/namespaces/${namespace}/secrets${name ? `/${name}` : ''}`;
  const found = (client: KubeClient, path: string) =>
    client.request<KubeObject & { data?: Record<string, string> }>('GET', path).catch((error: unknown) => {
      if (error instanceof ApiError && error.statusCode === 404) return undefined;
      throw error;
    });
  /** Waits until `client` holds `path` and `check` accepts it; answers it. */
  const until = (what: string, client: KubeClient, path: string, check: (object: KubeObject) => boolean) =>
    eventually(what, async () => {
      const object = await found(client, path);
      return object && check(object) ? object : undefined;
    });
  const untilGone = (what: string, client: KubeClient, path: string) =>
    eventually(what, async () => ((await found(client, path)) ? undefined : true), 60_000);
  const dataOf = (object: KubeObject) => (object as { data?: Record<string, string> }).data;

  /** A Deployment that mounts `configMap` and takes its environment from `secret`. */
  const workload = (name: string, configMap: string, secret: string) => {
    const base = deployment(name);
    return {
      ...base,
      spec: {
        ...base.spec,
        template: {
          ...base.spec.template,
          spec: {
            containers: [{ name: 'web', image: 'nginx', envFrom: [{ secretRef: { name: secret } }] }],
            volumes: [{ name: 'settings', configMap: { name: configMap } }],
          },
        },
      },
    };
  };
  const configMap = (name: string, mode: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { app: 'web' } },
    data: { mode },
  });
  const secret = (name: string, password: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    type: 'Opaque',
    stringData: { password },
  });

  beforeAll(async () => {
    started = await startJoinFederation(env, fixture, { cellSetName, namespace });
    routed = started.federation.routed;
  });

  afterAll(async () => {
    await stopJoinFederation(env, fixture, started, { cellSetName, namespace });
  });

  it('copies a ConfigMap from another cell and a Secret from the control plane next to the workload, in step, hidden from clients', async () => {
    const web = pickName('web', (name) => afterCell(name) === beforeCell(name));
    const home = beforeCell(web);
    const settings = pickName('settings', (name) => beforeCell(name) !== home && afterCell(name) !== home);
    await routed.request('POST', configMapPath(), { body: configMap(settings, 'fast') });
    await routed.request('POST', secretPath(), { body: secret('db', 'first') });
    await routed.request('POST', `${DEPLOYMENTS}/namespaces/${namespace}/deployments`, {
      body: workload(web, settings, 'db'),
    });

    const follower = await until(`${settings} in ${home}`, cell(home), configMapPath(settings), () => true);
    expect(dataOf(follower)).toEqual({ mode: 'fast' });
    expect(follower.metadata.labels).toEqual({ app: 'web', [FOLLOWER_LABEL]: beforeCell(settings) });
    const secretCopy = await until(`db in ${home}`, cell(home), secretPath('db'), () => true);
    expect(dataOf(secretCopy)).toEqual({ password: Buffer.from('first').toString('base64') });
    expect(secretCopy.metadata.labels?.[FOLLOWER_LABEL]).toBe('control-plane');

    // Clients see the object once, from where it lives: never the follower.
    const listed = await routed.request<KubeList>('GET', configMapPath());
    const shown = listed.items.filter((item) => item.metadata.name === settings);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.metadata.labels).toEqual({ app: 'web' });
    expect((await routed.request<KubeObject>('GET', configMapPath(settings))).metadata.labels).toEqual({
      app: 'web',
    });

    // A change through the router reaches the follower; so does one to the Secret in the control plane.
    await routed.request('PATCH', configMapPath(settings), {
      body: { data: { mode: 'safe' } },
      contentType: 'application/merge-patch+json',
    });
    await until(
      `${settings} changed in ${home}`,
      cell(home),
      configMapPath(settings),
      (object) => dataOf(object)?.['mode'] === 'safe',
    );
    await plain.request('PATCH', secretPath('db'), {
      body: { stringData: { password: 'second' } },
      contentType: 'application/merge-patch+json',
    });
    await until(
      `db changed in ${home}`,
      cell(home),
      secretPath('db'),
      (object) => dataOf(object)?.['password'] === Buffer.from('second').toString('base64'),
    );

    // A deletecollection through the router deletes the object, lists it once, and its follower goes too.
    const deleted = await routed.request<KubeList>('DELETE', configMapPath(), {
      query: { labelSelector: 'app=web' },
    });
    expect(deleted.items.filter((item) => item.metadata.name === settings)).toHaveLength(1);
    await untilGone(`${settings} gone from ${home}`, cell(home), configMapPath(settings));

    // Nothing names the Secret any more: its follower goes, the Secret stays where it lives.
    await routed.request('DELETE', `${DEPLOYMENTS}/namespaces/${namespace}/deployments/${web}`);
    await untilGone(`db gone from ${home}`, cell(home), secretPath('db'));
    expect(await found(plain, secretPath('db'))).toBeDefined();
  });

  it('follows the workload through a join; the ConfigMap’s own move into the follower’s cell writes over it', async () => {
    // Both move to the joining cell; before the join they live apart.
    const web = pickName('mover', (name) => afterCell(name) === three);
    const settings = pickName(
      'moving-settings',
      (name) => afterCell(name) === three && beforeCell(name) !== beforeCell(web),
    );
    await routed.request('POST', configMapPath(), { body: configMap(settings, 'before') });
    await routed.request('POST', secretPath(), { body: secret('moving-db', 'kept') });
    await routed.request('POST', `${DEPLOYMENTS}/namespaces/${namespace}/deployments`, {
      body: workload(web, settings, 'moving-db'),
    });
    await until(`${settings} next to ${web}`, cell(beforeCell(web)), configMapPath(settings), () => true);

    await joinThirdCell(env, fixture, cellSetName);

    // In the new cell the ConfigMap is the object itself now, not a follower, and the router shows it.
    const moved = await until(
      `${settings} in ${three} as the object`,
      cell(three),
      configMapPath(settings),
      (object) => object.metadata.labels?.[FOLLOWER_LABEL] === undefined,
    );
    expect(dataOf(moved)).toEqual({ mode: 'before' });
    const secretCopy = await until(`moving-db in ${three}`, cell(three), secretPath('moving-db'), () => true);
    expect(secretCopy.metadata.labels?.[FOLLOWER_LABEL]).toBe('control-plane');
    // The old cell's followers go once the workload's old copy is deleted (--delete-after 4s).
    await untilGone(
      `the follower of ${settings} in ${beforeCell(web)}`,
      cell(beforeCell(web)),
      configMapPath(settings),
    );
    await untilGone(`moving-db in ${beforeCell(web)}`, cell(beforeCell(web)), secretPath('moving-db'));

    await routed.request('PATCH', configMapPath(settings), {
      body: { data: { mode: 'after' } },
      contentType: 'application/merge-patch+json',
    });
    expect(dataOf(await routed.request<KubeObject>('GET', configMapPath(settings)))).toEqual({
      mode: 'after',
    });
    expect(dataOf((await found(cell(three), configMapPath(settings)))!)).toEqual({ mode: 'after' });
  });
});
