import {
  CELLSET_API_VERSION,
  CELLSET_KIND,
  DEFAULT_CELLSET_NAME,
  DEFAULT_SECRET_KEY,
  parseCellSet,
  type CellSet,
} from '@cellfed/api';

import { CELL_COMPONENTS, credentialsNamespace, type CellComponent } from '../chart/cell-identities.ts';

/** A cell as the control plane's components will reach it, each as an identity of its own. */
export interface CellCredentials {
  id: string;
  /** Each component's kubeconfig text, valid where it runs (for kind: the cluster-internal address). */
  kubeconfigs: Readonly<Record<CellComponent, string>>;
}

/** Name of the Secret holding a cell's kubeconfig. */
export function cellSecretName(cellId: string): string {
  return `${cellId}-kubeconfig`;
}

export const CELL_LABEL = 'cells.cellfed.io/cell';

/**
 * One cell's kubeconfig Secrets, one per component in that component's credentials namespace (the same
 * name in each, as the CellSet names it without a namespace), labelled with the cell so they can be listed.
 */
export function cellSecrets(cell: CellCredentials) {
  return CELL_COMPONENTS.map((component) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: cellSecretName(cell.id),
      namespace: credentialsNamespace(component),
      labels: { [CELL_LABEL]: cell.id, 'app.kubernetes.io/part-of': 'cellfed' },
    },
    type: 'Opaque',
    data: { [DEFAULT_SECRET_KEY]: Buffer.from(cell.kubeconfigs[component], 'utf8').toString('base64') },
  }));
}

/**
 * The CellSet listing every cell as Normal with weight 1, built and validated with @cellfed/hashing's
 * schema, so what the environment writes is what the controllers will accept. Its Secret references name
 * no namespace: each component reads its own.
 */
export function initialCellSet(cellIds: readonly string[]): CellSet {
  return parseCellSet({
    apiVersion: CELLSET_API_VERSION,
    kind: CELLSET_KIND,
    metadata: { name: DEFAULT_CELLSET_NAME },
    spec: {
      cells: cellIds.map((id) => ({
        id,
        state: 'Normal',
        weight: 1,
        kubeconfigSecretRef: { name: cellSecretName(id), key: DEFAULT_SECRET_KEY },
      })),
    },
  });
}
