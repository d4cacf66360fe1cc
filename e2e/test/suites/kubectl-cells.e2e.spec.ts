import { BACKUP_CELL_LABEL, CELL_BACKUP_NAMESPACE, cellBackupCrd, parseCellSet } from '@cellfed/api';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { KubeClient } from '@cellfed/controller-kit';
import { APPLY_PATCH, cellBackupName, cellBackupOf, cellBackupPath } from '@cellfed/federation';
import { RoutingTable } from '@cellfed/hashing';
import { KubeConfig } from '@kubernetes/client-node';

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
  const cells = (...args: string[]) => cellsWith(env.controlPlane.kubeconfig, ...args);
  const cellsWith = (kubeconfig: string, ...args: string[]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      execFile(
        join(process.env['CELLFED_TOOLS_BIN'] ?? '', 'kubectl'),
        ['cells', ...args],
        {
          env: {
            ...process.env,
            KUBECONFIG: kubeconfig,
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

  it('backup reads the object in its backup cell with the operator’s own context there, never a cell Secret', async () => {
    const spec = parseCellSet(
      await controlPlane.request<unknown>('GET', `/apis/cells.cellfed.io/v1alpha1/cellsets/${env.cellSet}`),
    ).spec;
    const { primary, backup } = RoutingTable.fromCellSet(spec).locateCurrent(`${namespace}/settings`);
    const backupCell = env.cells.find((cell) => cell.id === backup)!;
    const cell = KubeClient.fromFile(backupCell.kubeconfig);
    const ref = {
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      namespace,
      name: 'settings',
    };
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        namespace,
        name: 'settings',
        uid: 'b1e2c3d4-0000-4000-8000-000000000001',
        resourceVersion: '7',
      },
      data: { colour: 'teal' },
    };
    // The operator: the control plane as the current context, and a context of their own for the backup
    // cell under a name of their choosing (their kubeconfig file beside the control plane's, as kubectl merges).
    const dir = mkdtempSync(join(tmpdir(), 'kubectl-cells-operator-'));
    const own = new KubeConfig();
    own.loadFromFile(backupCell.kubeconfig);
    const context = own.getContextObject(own.getCurrentContext())!;
    own.loadFromOptions({
      clusters: [{ ...own.getCluster(context.cluster)!, name: `ops-${backup}` }],
      users: [{ ...own.getUser(context.user)!, name: `ops-${backup}` }],
      contexts: [{ name: `ops@${backup}`, cluster: `ops-${backup}`, user: `ops-${backup}` }],
      currentContext: `ops@${backup}`,
    });
    const operatorFile = join(dir, 'operator.kubeconfig');
    writeFileSync(operatorFile, own.exportConfig(), { mode: 0o600 });
    const operator = `${env.controlPlane.kubeconfig}:${operatorFile}`;
    try {
      // What the backup controller prepares in a cell, then a backup as it writes one.
      const crd = cellBackupCrd();
      await cell.request(
        'PATCH',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        {
          body: crd,
          contentType: APPLY_PATCH,
          query: { fieldManager: 'kubectl-cells-e2e', force: true },
        },
      );
      await cell.request('PATCH', `/api/v1/namespaces/${CELL_BACKUP_NAMESPACE}`, {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CELL_BACKUP_NAMESPACE } },
        contentType: APPLY_PATCH,
        query: { fieldManager: 'kubectl-cells-e2e' },
      });
      const written = cellBackupOf(configMap, ref, { primaryCell: primary, backupCell: backup! });
      const deadline = Date.now() + 30_000;
      for (;;) {
        const stored = await cell.request('POST', cellBackupPath(), { body: written }).then(
          () => true,
          (error: unknown) => (Date.now() > deadline ? Promise.reject(error) : false),
        );
        if (stored) break;
        await new Promise((resolve) => setTimeout(resolve, 250)); // the CRD being established
      }

      // No context reaches the backup cell: said in one line, nothing read.
      const missing = await cellsWith(operator, 'backup', 'cm/settings', '-n', namespace);
      expect(missing.code).toBe(1);
      expect(missing.out.trim().split('\n')).toEqual([
        `kubectl cells: cell ${backup}: your kubeconfig has no context named ${backup}; name the one that reaches the cell with --cell-context ${backup}=CONTEXT`,
      ]);

      /** `kubectl cells backup` of the ConfigMap, with the operator's context for the backup cell. */
      const showBackup = () =>
        cellsWith(
          operator,
          'backup',
          'cm/settings',
          '-n',
          namespace,
          '--cell-context',
          `${backup}=ops@${backup}`,
        );
      const shown = await showBackup();
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.out)).toMatchObject({
        metadata: { name: 'settings', namespace },
        data: { colour: 'teal' },
      });

      // A context that reaches another cell than the one it is used for: what it holds says so (each backup
      // is labelled with the cell that keeps it), and nothing of it is shown.
      await cell.request('PATCH', cellBackupPath(cellBackupName(ref)), {
        body: { metadata: { labels: { [BACKUP_CELL_LABEL]: primary } } },
        contentType: 'application/merge-patch+json',
      });
      const elsewhere = await showBackup();
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.out.trim().split('\n')).toEqual([
        `kubectl cells: the context used for cell ${backup} reaches cell ${primary} (its backup ${CELL_BACKUP_NAMESPACE}/${cellBackupName(ref)} is labelled ${BACKUP_CELL_LABEL}=${primary}); name the right one with --cell-context ${backup}=CONTEXT`,
      ]);
    } finally {
      await cell.request('DELETE', cellBackupPath(cellBackupName(ref))).catch(() => undefined);
      await cell.close();
      rmSync(dir, { recursive: true, force: true });
    }
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
