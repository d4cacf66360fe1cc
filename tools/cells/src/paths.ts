import { fileURLToPath } from 'node:url';

/** The CRD manifests the Helm chart installs; the environment installs the same files. */
export const CHART_CRD_DIR = fileURLToPath(new URL('../../../charts/cellfed/crds', import.meta.url));
