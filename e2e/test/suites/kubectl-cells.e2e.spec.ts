import { parseCellSet } from '@cellfed/api';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { KubeClient } from '@cellfed/controller-kit';
import { RoutingTable } from '@cellfed/hashing';

import { cellSetSpec, createCellSet, deleteCellSet, readCellSet } from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';

// The plugin as users run it: its published file (`nx run kubectl-cells:build`, which the e2e target depends
// on) linked as `kubectl-cells` on PATH, called as `kubectl cells …` against the environment's control plane.
const PLUGIN = fileURLToPath(
  new URL('../../../packages/kubectl-cells/dist/kubectl-cells.mjs', import.meta.url),
);

describeE2e('kubectl cells', () => {
  const env = e2eEnv();
  const bin = mkdtempSync(join(tmpdir(), 'kubectl-cells-'));
  const namespace = `cells-${Date.now()}`;
  const controlPlane = KubeClient.fromFile(env.controlPlane.kubeconfig);
  // kubectl finds plugins on PATH (and takes no flags before a plugin's name: the kubeconfig comes from
  // KUBECONFIG, as users set it); the plugin's shebang finds Node.js 24 on PATH too.
  const cells = (...args: string[]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      execFile(
        join(process.env['CELLFED_TOOLS_BIN'] ?? '', 'kubectl'),
        ['cells', ...args],
        {
          env: {
            ...process.env,
            KUBECONFIG: env.controlPlane.kubeconfig,
            PATH: `${bin}:${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
          },
        },
        (error, stdout, stderr) =>
          resolve({
            code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
            out: `${stdout}${stderr}`,
          }),
      );
    });

  beforeAll(() => {
    expect(existsSync(PLUGIN)).toBe(true);
    symlinkSync(PLUGIN, join(bin, 'kubectl-cells'));
  });

  afterAll(async () => {
    rmSync(bin, { recursive: true, force: true });
    await controlPlane.close();
  });

  it('status lists every cell of the CellSet with its state and weight', async () => {
    const { code, out } = await cells('status');
    expect(code).toBe(0);
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^CELL\s+STATE\s+WEIGHT\s+OBJECTS$/);
    for (const cell of env.cells) expect(out).toMatch(new RegExp(`^${cell.id}\\s+Normal\\s+1\\s`, 'm'));
    expect(out).toContain('rebalance:');
  });

  it('where names the cell the ring gives an object and its backup cell', async () => {
    const spec = parseCellSet(
      await controlPlane.request<unknown>('GET', `/apis/cells.cellfed.io/v1alpha1/cellsets/${env.cellSet}`),
    ).spec;
    const table = RoutingTable.fromCellSet(spec);
    const { primary, backup } = table.locateCurrent(`${namespace}/web`);
    const { code, out } = await cells('where', 'deploy/web', '-n', namespace);
    expect(code).toBe(0);
    expect(out).toMatch(
      new RegExp(`${namespace}/web\\s+${namespace}/web\\s+${primary}\\s+${backup}\\s+settled`),
    );
  });

  it('plan says what adding a cell would move, beside the optimum', async () => {
    const { code, out } = await cells('plan', '--add', 'cell-99');
    expect(code).toBe(0);
    expect(out).toMatch(/^\d+ of \d+ objects would move \(the fewest possible: \d+\)$/m);
    expect(out).toMatch(/^cell-99\s+0\s+\d+\s+\d+\s+0$/m);
  });

  it('says what is wrong in one line and exits non-zero', async () => {
    const unknown = await cells('move');
    expect(unknown.code).toBe(2);
    expect(unknown.out.split('\n')[0]).toBe('kubectl cells: unknown command "move"');
    const missing = await cells('status', '--cellset', 'no-such-cellset');
    expect(missing.code).toBe(1);
    expect(missing.out.trim().split('\n')).toHaveLength(1);
    expect(missing.out).toMatch(/^kubectl cells: .*404/);
  });

  it('down, rejoin, add and drain edit the CellSet, checked, and refuse what the controllers would refuse', async () => {
    const name = `cells-edit-${Date.now()}`;
    const ids = env.cells.map((cell) => cell.id) as [string, string, string];
    await createCellSet(
      env.controlPlane.kubeconfig,
      name,
      cellSetSpec({ [ids[0]]: 'Normal', [ids[1]]: 'Normal' }),
    );
    const states = async () =>
      Object.fromEntries(
        (
          (await readCellSet(env.controlPlane.kubeconfig, name)) as {
            spec: { cells: { id: string; state: string }[] };
          }
        ).spec.cells.map((cell) => [cell.id, cell.state]),
      );
    try {
      expect(await cells('down', ids[1], '--cellset', name, '--wait')).toMatchObject({
        code: 0,
        out: expect.stringContaining(`cell ${ids[1]}: down requested; done`),
      });
      expect(await states()).toEqual({ [ids[0]]: 'Normal', [ids[1]]: 'Down' });
      // The last Normal cell cannot go Down: refused before anything is written.
      const refused = await cells('down', ids[0], '--cellset', name);
      expect(refused.code).toBe(1);
      expect(refused.out).toMatch(
        /^kubectl cells: the CellSet would be invalid: .*at least one cell must be Normal/,
      );
      expect((await cells('rejoin', ids[1], '--cellset', name)).code).toBe(0);
      expect((await cells('add', ids[2], '--weight', '2', '--cellset', name)).code).toBe(0);
      expect(await states()).toEqual({ [ids[0]]: 'Normal', [ids[1]]: 'Joining', [ids[2]]: 'Joining' });
      expect((await cells('drain', ids[2], '--cellset', name)).code).toBe(0);
      expect((await states())[ids[2]]).toBe('Draining');
    } finally {
      await deleteCellSet(env.controlPlane.kubeconfig, name);
    }
  });

  it('weight changes a Normal cell’s weight with previousWeight; the apiserver refuses a bare weight change', async () => {
    const name = `cells-weight-${Date.now()}`;
    const ids = env.cells.map((cell) => cell.id) as [string, string, string];
    await createCellSet(
      env.controlPlane.kubeconfig,
      name,
      cellSetSpec({ [ids[0]]: 'Normal', [ids[1]]: 'Normal' }),
    );
    const path = `/apis/cells.cellfed.io/v1alpha1/cellsets/${name}`;
    const cellsOf = async () =>
      (await controlPlane.request<{ spec: { cells: Record<string, unknown>[] } }>('GET', path)).spec.cells;
    const patchCells = (cells: unknown) =>
      controlPlane.request('PATCH', path, {
        body: { spec: { cells } },
        contentType: 'application/merge-patch+json',
      });
    try {
      // Without previousWeight the routers would send requests where the objects are not yet: refused by the
      // CRD's transition rule, whoever writes it.
      const bare = (await cellsOf()).map((cell) => (cell.id === ids[1] ? { ...cell, weight: 3 } : cell));
      await expect(patchCells(bare)).rejects.toThrow(/a cell's weight changes only while it is Normal/);
      expect(await cells('weight', `${ids[1]}=3`, '--cellset', name)).toMatchObject({
        code: 0,
        out: expect.stringContaining(`cell ${ids[1]}: weight requested`),
      });
      expect((await cellsOf()).find((cell) => cell.id === ids[1])).toMatchObject({
        weight: 3,
        previousWeight: 1,
      });
      // One change at a time.
      const again = await cells('weight', `${ids[1]}=5`, '--cellset', name);
      expect(again).toMatchObject({
        code: 1,
        out: expect.stringContaining('is still changing weight (1 → 3)'),
      });
      const sneaky = (await cellsOf()).map((cell) =>
        cell.id === ids[1] ? { ...cell, weight: 5, previousWeight: 3 } : cell,
      );
      await expect(patchCells(sneaky)).rejects.toThrow(/a cell's weight changes only while it is Normal/);
      // What the rebalance controller writes when the objects have moved: previousWeight gone.
      const finished = (await cellsOf()).map(({ previousWeight: _done, ...cell }) => cell);
      await patchCells(finished);
      expect((await cellsOf()).find((cell) => cell.id === ids[1])).not.toHaveProperty('previousWeight');
    } finally {
      await deleteCellSet(env.controlPlane.kubeconfig, name);
    }
  });
});
