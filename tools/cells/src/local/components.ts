import { controllersFlagValue } from '../control-plane/controllers.ts';
import type { ApiserverPki } from './pki.ts';

/** Where one apiserver's processes listen and keep their files. Everything on loopback. */
export interface ApiserverLayout {
  id: string;
  /** kube-apiserver's secure port. */
  port: number;
  etcdClientPort: number;
  etcdPeerPort: number;
  /** etcd's data directory: on tmpfs, so a test run never waits for a disk. */
  etcdDataDir: string;
  /** ClusterIPs are allocated from it; its first address is the in-cluster `kubernetes` Service. */
  serviceCidr: string;
  pki: ApiserverPki;
  /** kubeconfig of kube-controller-manager (its own identity, not admin). */
  controllerManagerKubeconfig: string;
  /**
   * Controllers kube-controller-manager leaves off. The router control plane's quota controller is: cellfed's
   * rebalance controller writes its quotas' status from the cells' use (docs/governance.md).
   */
  disabledControllers?: readonly string[];
}

export function apiserverUrl(layout: Pick<ApiserverLayout, 'port'>): string {
  return `https://127.0.0.1:${layout.port}`;
}

export function etcdUrl(layout: Pick<ApiserverLayout, 'etcdClientPort'>): string {
  return `http://127.0.0.1:${layout.etcdClientPort}`;
}

/** A single-member etcd for one apiserver, plain HTTP on loopback (as envtest runs it), no fsync. */
export function etcdArgs(layout: ApiserverLayout): string[] {
  const peer = `http://127.0.0.1:${layout.etcdPeerPort}`;
  return [
    `--name=${layout.id}`,
    `--data-dir=${layout.etcdDataDir}`,
    `--listen-client-urls=${etcdUrl(layout)}`,
    `--advertise-client-urls=${etcdUrl(layout)}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=${layout.id}=${peer}`,
    '--initial-cluster-state=new',
    // Test data only: an fsync per write would make every apiserver write wait for the disk.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

/**
 * kube-apiserver without nodes: its own CA and certificates, RBAC, service-account tokens. On loopback it
 * needs `--advertise-address` and no endpoint reconciler, or it tries to publish an address pods could use.
 */
export function kubeApiserverArgs(layout: ApiserverLayout): string[] {
  const { pki } = layout;
  return [
    `--etcd-servers=${etcdUrl(layout)}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${layout.port}`,
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.caCert}`,
    // Identity from a front proxy (X-Remote-*), as kubeadm configures it; only front-proxy-client may.
    `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    '--authorization-mode=RBAC',
    `--service-cluster-ip-range=${layout.serviceCidr}`,
    `--service-account-issuer=${apiserverUrl(layout)}`,
    `--service-account-key-file=${pki.serviceAccountPublicKey}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    '--allow-privileged=true',
    '--profiling=false',
    '--v=1',
  ];
}

/** kube-controller-manager, so Deployments get ReplicaSets and namespaces are really deleted. */
export function kubeControllerManagerArgs(layout: ApiserverLayout): string[] {
  const { pki } = layout;
  return [
    `--kubeconfig=${layout.controllerManagerKubeconfig}`,
    // Serving only /healthz and /metrics; nothing here scrapes them, so no port to find.
    '--secure-port=0',
    '--leader-elect=false',
    // Each controller runs as its own service account, as on a real control plane.
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${pki.serviceAccountKey}`,
    `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    ...(layout.disabledControllers?.length
      ? [`--controllers=${controllersFlagValue(layout.disabledControllers)}`]
      : []),
    '--profiling=false',
    '--v=1',
  ];
}
