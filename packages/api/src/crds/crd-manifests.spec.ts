import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { load } from 'js-yaml';

import { crdManifests, renderCrd } from './crd-manifests.ts';

const CHART_CRDS = join(import.meta.dirname, '../../../../charts/cellfed/crds');

describe('CRD manifests', () => {
  it('are committed exactly as generated (run `npx nx run api:crds` after a change)', () => {
    for (const { file, crd } of crdManifests()) {
      expect(readFileSync(join(CHART_CRDS, file), 'utf8')).toBe(renderCrd(crd));
    }
  });

  it('are all the chart installs', () => {
    expect(readdirSync(CHART_CRDS).sort()).toEqual(
      crdManifests()
        .map(({ file }) => file)
        .sort(),
    );
  });

  it('render to YAML that reads back to the same object', () => {
    for (const { crd } of crdManifests()) expect(load(renderCrd(crd))).toEqual(crd);
  });
});
