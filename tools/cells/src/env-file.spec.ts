import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { E2eErrorCode } from './errors.ts';
import { readEnvFile, writeEnvFile, type EnvFile } from './env-file.ts';

describe('env.json', () => {
  const dir = mkdtempSync(join(tmpdir(), 'env-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env: EnvFile = {
    version: 1,
    provider: 'local',
    dir,
    createdAt: '2026-11-23T00:00:00.000Z',
    controlPlane: { id: 'control-plane', url: 'https://127.0.0.1:6443', kubeconfig: '/k/cp' },
    cells: [{ id: 'cell-1', url: 'https://127.0.0.1:6444', kubeconfig: '/k/c1' }],
    cellSet: 'default',
    secretNamespace: 'cellfed-system',
  };

  it('round-trips', () => {
    writeEnvFile(env);
    expect(readEnvFile(dir)).toEqual(env);
  });

  it('says how to make one when it is missing, and what is wrong when it is malformed', () => {
    expect(() => readEnvFile(join(dir, 'none'))).toThrow(
      expect.objectContaining({
        code: E2eErrorCode.InvalidEnvironment,
        message: expect.stringContaining('npm run cells -- up'),
      }),
    );
    const bad = mkdtempSync(join(dir, 'bad-'));
    writeFileSync(
      join(bad, 'env.json'),
      JSON.stringify({ ...env, cells: [], controlPlane: { id: 'x', url: 'nope', kubeconfig: 'k' } }),
    );
    expect(() => readEnvFile(bad)).toThrow(/controlPlane\.url: .*; cells: /);
  });
});
