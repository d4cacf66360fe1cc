import {
  CELLSET_API_VERSION,
  CELLSET_KIND,
  DEFAULT_CELLSET_NAME,
  DEFAULT_SECRET_KEY,
  DEFAULT_SECRET_NAMESPACE,
  parseCellSet,
  type CellSet,
} from '@cellfed/api';

/** A cell as the control plane's controllers will reach it. */
export interface CellCredentials {
  id: string;
  /** kubeconfig text valid where the controllers run (for kind: the cluster-internal address). */
  kubeconfig: string;
}

/** Name of the Secret holding a cell's kubeconfig. */
export function cellSecretName(cellId: string): string {
  return `${cellId}-kubeconfig`;
}

export const CELL_LABEL = 'cells.cellfed.io/cell';

/** The Secret for one cell's kubeconfig, labelled with the cell so it can be listed. */
export function cellSecret(cell: CellCredentials, namespace = DEFAULT_SECRET_NAMESPACE) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: cellSecretName(cell.id),
      namespace,
      labels: { [CELL_LABEL]: cell.id, 'app.kubernetes.io/part-of': 'cellfed' },
    },
    type: 'Opaque',
    data: { [DEFAULT_SECRET_KEY]: Buffer.from(cell.kubeconfig, 'utf8').toString('base64') },
  };
}

/**
 * The CellSet listing every cell as Normal with weight 1, built and validated with @cellfed/hashing's
 * schema, so what the environment writes is what the controllers will accept.
 */
export function initialCellSet(cellIds: readonly string[], namespace = DEFAULT_SECRET_NAMESPACE): CellSet {
  return parseCellSet({
    apiVersion: CELLSET_API_VERSION,
    kind: CELLSET_KIND,
    metadata: { name: DEFAULT_CELLSET_NAME },
    spec: {
      cells: cellIds.map((id) => ({
        id,
        state: 'Normal',
        weight: 1,
        kubeconfigSecretRef: { name: cellSecretName(id), namespace, key: DEFAULT_SECRET_KEY },
      })),
    },
  });
}
