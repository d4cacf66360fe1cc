import { join } from 'node:path';

import { KubeClient, type WatchEvent } from '@cellfed/controller-kit';

import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { routerKubeconfig, startRouter, stopRouter, type RouterProcess } from '../helpers/router-process.ts';

interface Meta {
  readonly namespace?: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
}
interface Listed {
  readonly items: { readonly metadata: Meta }[];
}

const names = (list: Listed) => list.items.map((item) => `${item.metadata.namespace}/${item.metadata.name}`);

/**
 * What every apiserver makes for itself (`kube-root-ca.crt` in each namespace, `default/kubernetes` and its
 * Endpoints and EndpointSlice, the `kube-system` objects): through the router, clients see exactly one copy
 * of each, the control plane's, the same in GET, LIST, WATCH and DELETE — as one plain apiserver (the control
 * plane itself, asked directly) shows its own. Each cell has copies of its own that never show.
 */
describeE2e('cell router: the objects each apiserver makes for itself', () => {
  const env = e2eEnv();
  const plain = KubeClient.fromFile(env.controlPlane.kubeconfig);
  const namespace = `own-${Date.now().toString(36)}`;
  let router: RouterProcess;
  let routed: KubeClient;

  /** The same request answered by one plain apiserver and through the router. */
  async function both<T>(path: string): Promise<{ plain: T; routed: T }> {
    return { plain: await plain.request<T>('GET', path), routed: await routed.request<T>('GET', path) };
  }

  async function eventually<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
    for (let i = 0; i < 150; i++) {
      const value = await read().catch(() => undefined);
      if (value !== undefined) return value;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`never: ${what}`);
  }

  /** The first event of a watch, as the e2e framework waits for kube-root-ca.crt in a new namespace. */
  async function firstEvent(client: KubeClient, path: string): Promise<WatchEvent> {
    const abort = new AbortController();
    try {
      for await (const event of await client.watch(path, { signal: abort.signal })) return event;
      throw new Error(`the watch of ${path} ended with no event`);
    } finally {
      abort.abort();
    }
  }

  beforeAll(async () => {
    router = await startRouter(env);
    routed = KubeClient.fromFile(routerKubeconfig(env, router, join(env.dir, 'router-own.kubeconfig')));
    await routed.request('POST', '/api/v1/namespaces', { body: { metadata: { name: namespace } } });
    // A namespace's own ConfigMap comes from the controller manager, a moment after the namespace.
    await eventually('kube-root-ca.crt', () =>
      plain.request(`GET`, `/api/v1/namespaces/${namespace}/configmaps/kube-root-ca.crt`),
    );
  }, 120_000);

  afterAll(async () => {
    await routed?.request('DELETE', `/api/v1/namespaces/${namespace}`).catch(() => undefined);
    await stopRouter(router);
  });

  it('a new namespace’s kube-root-ca.crt: the same object in GET, LIST (namespace and all) and WATCH', async () => {
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const got = await both<{ metadata: Meta }>(`${path}/kube-root-ca.crt`);
    expect(got.routed.metadata.uid).toBe(got.plain.metadata.uid);

    const listed = await both<Listed>(path);
    expect(names(listed.routed)).toEqual(names(listed.plain));
    expect(listed.routed.items.map((item) => item.metadata.uid)).toEqual([got.plain.metadata.uid]);

    const everywhere = await routed.request<Listed>('GET', '/api/v1/configmaps');
    const copies = everywhere.items.filter(
      (item) => item.metadata.namespace === namespace && item.metadata.name === 'kube-root-ca.crt',
    );
    expect(copies.map((item) => item.metadata.uid)).toEqual([got.plain.metadata.uid]);

    // As Kubernetes' e2e framework waits for it: a list and watch narrowed to its name.
    const selector = `${path}?fieldSelector=${encodeURIComponent('metadata.name=kube-root-ca.crt')}`;
    const event = await firstEvent(routed, selector);
    expect(event.type).toBe('ADDED');
    expect((event.object as { metadata: Meta }).metadata.uid).toBe(got.plain.metadata.uid);
    // One object version, one resourceVersion: the GET's, the list items' and the watch event's.
    const version = got.routed.metadata.resourceVersion;
    expect([
      listed.routed.items[0]!.metadata.resourceVersion,
      copies[0]!.metadata.resourceVersion,
      (event.object as { metadata: Meta }).metadata.resourceVersion,
    ]).toEqual([version, version, version]);
  });

  it('default/kubernetes, its Endpoints and EndpointSlice: the control plane’s, once, in GET and LIST', async () => {
    /** The object's uid, or none where the apiserver has none (loopback apiservers reconcile no endpoints). */
    const uidOf = (client: KubeClient, path: string) =>
      client.request<{ metadata: Meta }>('GET', path).then(
        (object) => object.metadata.uid,
        (error: { statusCode?: number }) => {
          if (error.statusCode === 404) return undefined;
          throw error;
        },
      );
    for (const collection of [
      '/api/v1/namespaces/default/services',
      '/api/v1/namespaces/default/endpoints',
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
    ]) {
      const uid = await uidOf(plain, `${collection}/kubernetes`);
      expect(await uidOf(routed, `${collection}/kubernetes`)).toBe(uid);
      const listed = await routed.request<Listed>('GET', collection);
      expect(
        listed.items.filter((item) => item.metadata.name === 'kubernetes').map((item) => item.metadata.uid),
      ).toEqual(uid === undefined ? [] : [uid]);
    }
    // Services: should find a service from listing all namespaces [Conformance].
    const services = await routed.request<Listed>('GET', '/api/v1/services');
    expect(names(services).filter((name) => name === 'default/kubernetes')).toHaveLength(1);
  });

  it('kube-system and kube-public: what one apiserver lists, and the same objects', async () => {
    for (const path of [
      '/api/v1/namespaces/kube-system/configmaps',
      '/api/v1/namespaces/kube-public/configmaps',
    ]) {
      const listed = await both<Listed>(path);
      expect(listed.routed.items.map((item) => item.metadata.uid)).toEqual(
        listed.plain.items.map((item) => item.metadata.uid),
      );
      expect(listed.plain.items.length).toBeGreaterThan(0);
    }
  });

  it('DELETE and deletecollection reach the control plane’s copy, which its controller makes again', async () => {
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const before = await plain.request<{ metadata: Meta }>('GET', `${path}/kube-root-ca.crt`);
    await routed.request('DELETE', `${path}/kube-root-ca.crt`);
    const again = await eventually('kube-root-ca.crt made again', async () => {
      const now = await plain.request<{ metadata: Meta }>('GET', `${path}/kube-root-ca.crt`);
      return now.metadata.uid !== before.metadata.uid ? now : undefined;
    });
    expect((await routed.request<{ metadata: Meta }>('GET', `${path}/kube-root-ca.crt`)).metadata.uid).toBe(
      again.metadata.uid,
    );

    // `kubectl delete configmaps --all`: one apiserver deletes its own kube-root-ca.crt with the rest.
    await routed.request('POST', path, { body: { metadata: { name: 'ordinary' } } });
    const deleted = await routed.request<Listed>('DELETE', path);
    expect(names(deleted).sort()).toEqual([`${namespace}/kube-root-ca.crt`, `${namespace}/ordinary`]);
    const remade = await eventually('kube-root-ca.crt made again after deletecollection', async () => {
      const list = await routed.request<Listed>('GET', path);
      return list.items.length === 1 && list.items[0]!.metadata.uid !== again.metadata.uid ? list : undefined;
    });
    expect(names(remade)).toEqual([`${namespace}/kube-root-ca.crt`]);
    // The cells' own copies were never shown and are not deleted by a client: each still has its own.
  });
});
