// Writes the CRD manifests into the chart's crds/ directory (which the e2e environment also installs).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { crdManifests, renderCrd } from '../src/crds/crd-manifests.ts';

const dir = join(import.meta.dirname, '../../../charts/cellfed/crds');
for (const { file, crd } of crdManifests()) {
  writeFileSync(join(dir, file), renderCrd(crd));
  console.log(`wrote ${join('charts/cellfed/crds', file)}`);
}
