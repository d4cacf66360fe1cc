// kubectl cells — a kubectl plugin: `kubectl cells status|where|backup|plan|…`. Reads through the user's kubeconfig
// (the router, or the router control plane: both serve the CellSet and list every cellular object).
import {
  BACKUP_CELL_LABEL,
  CELL_BACKUP_NAMESPACE,
  ROUTER_CELLSET_LABEL,
  CELLSET_API_VERSION,
  DEFAULT_SECRET_NAMESPACE,
  parseCellSet,
  type CellSetSpec,
  type CellSetSpecInput,
  type GroupVersionResource,
} from '@cellfed/api';
import { setTimeout as sleep } from 'node:timers/promises';

import { KubeClient, errorMessage, isConflict, readIfExists } from '@cellfed/controller-kit';
import { RoutingTable } from '@cellfed/hashing';
import { KubeConfig } from '@kubernetes/client-node';
import {
  MERGE_PATCH,
  METADATA_LIST,
  backedUpObject,
  cellBackupName,
  holdsKey,
  legacyCellBackupName,
  cellBackupPath,
  type KubeList,
  type KubeObject,
  routersBehind,
  type RouterLease,
} from '@cellfed/federation';

import { backupCellsOf, otherCellOf } from './backup-cells.ts';
import { cellKubeConfig } from './cell-context.ts';
import { editCells, editSettled, progressLine } from './cell-edit.ts';
import { USAGE, parseCli, type CliCommand, type CliOptions } from './cli-args.ts';
import { planChange } from './plan.ts';
import { renderStatus } from './status.ts';
import { table } from './table.ts';
import { isTransient, patientRead } from './transient.ts';
import { whereIs } from './where.ts';
import { CellsCliError, CellsCliErrorCode } from './errors.ts';

/** kubectl's short names of the default cellular resources. */
const SHORT_NAMES: Record<string, string> = {
  deploy: 'deployments',
  sts: 'statefulsets',
  ds: 'daemonsets',
  cj: 'cronjobs',
  svc: 'services',
  cm: 'configmaps',
};

let parsed: { command: CliCommand; options: CliOptions };
try {
  parsed = parseCli(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`kubectl cells: ${errorMessage(error)}\n${USAGE}\n`);
  process.exit(2);
}

try {
  process.stdout.write(`${await run(parsed.command, parsed.options)}\n`);
} catch (error) {
  process.stderr.write(`kubectl cells: ${errorMessage(error)}\n`);
  process.exit(1);
}

async function run(command: CliCommand, options: CliOptions): Promise<string> {
  const config = new KubeConfig();
  if (options.kubeconfig) config.loadFromFile(options.kubeconfig);
  // As kubectl merges $KUBECONFIG's files: the first that names a current context sets it.
  else config.loadFromDefault(undefined, true);
  if (options.context) config.setCurrentContext(options.context);
  const client = new KubeClient(config, { userAgent: 'kubectl-cells' });
  try {
    const object = await client.request<unknown>(
      'GET',
      `/apis/${CELLSET_API_VERSION}/cellsets/${options.cellSet}`,
    );
    if (command.command === 'status') return renderStatus(object);
    if (command.command === 'edit') return await edit(client, options.cellSet, command);
    const spec = parseCellSet(object).spec;
    if (command.command === 'backup') {
      const namespace =
        command.namespace ?? config.getContextObject(config.getCurrentContext())?.namespace ?? 'default';
      return await showBackup(client, spec, command, namespace, (cell) =>
        cellKubeConfig(config, cell, command.cellContexts),
      );
    }
    if (command.command === 'where') {
      const resource = cellularResource(spec.cellularResources, command.resource);
      if (!resource) return `${command.resource} is not cellular: it lives in the router control plane`;
      const namespace =
        command.namespace ?? config.getContextObject(config.getCurrentContext())?.namespace ?? 'default';
      const labels = await namespaceLabels(client, namespace);
      const where = whereIs(spec, { namespace, name: command.name }, labels);
      return table(
        ['name', 'key', 'cell', 'backup', 'state'],
        [[`${namespace}/${command.name}`, where.key, where.cell, where.backup ?? '-', where.state]],
      );
    }
    const keys = await objectKeys(client, spec);
    const plan = planChange(spec, command.change, keys);
    return [
      `${plan.moved} of ${plan.total} objects would move (the fewest possible: ${plan.optimal})`,
      '',
      table(
        ['cell', 'objects now', 'after', 'in', 'out'],
        plan.cells.map((cell) => [
          cell.id,
          String(cell.before),
          String(cell.after),
          String(cell.in),
          String(cell.out),
        ]),
      ),
      ...(plan.flows.length > 0
        ? [
            '',
            table(
              ['from', 'to', 'objects'],
              plan.flows.map((flow) => [flow.from, flow.to, String(flow.count)]),
            ),
          ]
        : []),
    ].join('\n');
  } finally {
    await client.close();
  }
}

/**
 * The object as its CellBackup holds it, as JSON: looked for in the cells that would hold it
 * (backup-cells.ts), each read with the operator's own credentials there (cell-context.ts).
 */
async function showBackup(
  client: KubeClient,
  spec: CellSetSpec,
  command: Extract<CliCommand, { command: 'backup' }>,
  namespace: string,
  cellConfig: (cell: string) => KubeConfig,
): Promise<string> {
  const resource = cellularResource(spec.cellularResources, command.resource);
  if (!resource)
    throw new CellsCliError(
      CellsCliErrorCode.NoBackup,
      `${command.resource} is not cellular: it lives in the router control plane and has no backup`,
    );
  const ref = { resource, namespace, name: command.name };
  const cells = backupCellsOf(spec, ref, await namespaceLabels(client, namespace));
  // Every cell's way in first: a missing context is said before anything is read.
  const configs = cells.map((cell) => [cell, cellConfig(cell)] as const);
  // The legacy name: a backup not yet written anew since the names became a SHA-256 of the key.
  const names = [cellBackupName(ref), legacyCellBackupName(ref)];
  for (const [cell, config] of configs) {
    const cellClient = new KubeClient(config, { userAgent: 'kubectl-cells' });
    try {
      let backup: (KubeObject & { spec?: { data?: unknown; object?: unknown } }) | undefined;
      let name = '';
      for (name of names) {
        backup = await readIfExists(cellClient, cellBackupPath(name));
        if (backup && holdsKey(backup.metadata, ref)) break;
        backup = undefined;
      }
      if (!backup) continue;
      const other = otherCellOf(backup, cell);
      if (other)
        throw new CellsCliError(
          CellsCliErrorCode.WrongCellContext,
          `the context used for cell ${cell} reaches cell ${other} (its backup ${CELL_BACKUP_NAMESPACE}/${name} is labelled ${BACKUP_CELL_LABEL}=${other}); name the right one with --cell-context ${cell}=CONTEXT`,
        );
      const object = backedUpObject(backup);
      if (!object)
        throw new CellsCliError(
          CellsCliErrorCode.NoBackup,
          `cell ${cell}: backup ${CELL_BACKUP_NAMESPACE}/${name} holds nothing that can be read`,
        );
      return JSON.stringify(object, null, 2);
    } finally {
      await cellClient.close();
    }
  }
  throw new CellsCliError(
    CellsCliErrorCode.NoBackup,
    `no backup of ${resource.resource} ${namespace}/${command.name} in ${cells.join(', ') || 'any cell (one cell left)'}`,
  );
}

interface CellSetObject {
  metadata: { name: string; resourceVersion?: string; generation?: number };
  spec: { cells: CellSetSpecInput['cells'] };
  status?: { objects?: { moved?: number; toMove?: number }; etaSeconds?: number };
}

/**
 * Edits the CellSet's cells: read, change, check, write with the version read (a concurrent edit makes it
 * read again, up to 5 times); then, with --wait, follows the CellSet until the change has run its course.
 */
async function edit(
  client: KubeClient,
  name: string,
  command: Extract<CliCommand, { command: 'edit' }>,
): Promise<string> {
  const path = `/apis/${CELLSET_API_VERSION}/cellsets/${name}`;
  let written: CellSetObject;
  for (let attempt = 1; ; attempt++) {
    const current = await client.request<CellSetObject>('GET', path);
    const cells = editCells(current.spec.cells, command.edit);
    try {
      written = await client.request<CellSetObject>('PATCH', path, {
        body: { metadata: { resourceVersion: current.metadata.resourceVersion }, spec: { cells } },
        contentType: MERGE_PATCH,
      });
      break;
    } catch (error) {
      if (!isConflict(error) || attempt >= 5) throw error;
    }
  }
  const done = `cell ${command.edit.id}: ${command.edit.kind} requested`;
  if (!command.wait) return done;
  const deadline = Date.now() + command.timeoutMs;
  const overdue = () => {
    if (Date.now() > deadline)
      throw new CellsCliError(
        CellsCliErrorCode.Timeout,
        `cell ${command.edit.id}: not done after ${command.timeoutMs / 1000} s`,
      );
  };
  // A read of the wait that fails on its way (a router replica restarting) is asked again until the deadline.
  const read = <T>(what: () => Promise<T>) =>
    patientRead(what, {
      overdue,
      report: (line) => process.stderr.write(`${line}\n`),
      sleep,
    });
  // First every live router routes by the change (for `down`, that is the failover itself).
  const generation = written.metadata.generation ?? 0;
  for (;;) {
    const behind = await read(() => routersStillBehind(client, name, generation));
    if (behind === 0) break;
    overdue();
    process.stderr.write(`waiting for ${behind} router(s) to route with CellSet generation ${generation}\n`);
    await sleep(500);
  }
  let last = '';
  for (;;) {
    const now = await read(() => client.request<CellSetObject>('GET', path));
    if (editSettled(now.spec.cells, command.edit)) return `${done}; done`;
    overdue();
    const line = progressLine(now.status?.objects, now.status?.etaSeconds);
    if (line !== last) process.stderr.write(`${line}\n`);
    last = line;
    await sleep(1000);
  }
}

/**
 * How many live router replicas still route with an older CellSet generation, from their Leases; 0 when the
 * Leases may not be read (a user without access to them waits for the CellSet alone). A transient failure
 * is thrown, for the wait to ask again.
 */
async function routersStillBehind(client: KubeClient, cellSet: string, generation: number): Promise<number> {
  try {
    const leases = await client.request<KubeList<RouterLease>>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${DEFAULT_SECRET_NAMESPACE}/leases`,
      { query: { labelSelector: `${ROUTER_CELLSET_LABEL}=${cellSet}` } },
    );
    return routersBehind(leases.items ?? [], generation, Date.now()).length;
  } catch (error) {
    // A failure on the way is no answer: the wait asks again rather than take it for "none behind".
    if (isTransient(error)) throw error;
    return 0;
  }
}

/** The cellular resource a user names: `deployments`, `deployment`, `deploy`, or `deployments.apps`. */
function cellularResource(
  resources: readonly GroupVersionResource[],
  name: string,
): GroupVersionResource | undefined {
  const wanted = (SHORT_NAMES[name] ?? name).toLowerCase();
  return resources.find(
    (resource) =>
      resource.resource === wanted ||
      resource.resource === `${wanted}s` ||
      (resource.group !== '' && `${resource.resource}.${resource.group}` === wanted),
  );
}

async function namespaceLabels(
  client: KubeClient,
  namespace: string,
): Promise<Record<string, string> | undefined> {
  try {
    const object = await client.request<{ metadata: { labels?: Record<string, string> } }>(
      'GET',
      `/api/v1/namespaces/${namespace}`,
    );
    return object.metadata.labels;
  } catch {
    return undefined;
  }
}

/** Every cellular object's key, from lists through the router (metadata only), with its namespace's labels. */
async function objectKeys(
  client: KubeClient,
  spec: ReturnType<typeof parseCellSet>['spec'],
): Promise<string[]> {
  const table = RoutingTable.fromCellSet(spec);
  const namespaces = await client.request<KubeList>('GET', '/api/v1/namespaces', { accept: METADATA_LIST });
  const labels = new Map(
    (namespaces.items ?? []).map((item) => [item.metadata.name ?? '', item.metadata.labels]),
  );
  const keys: string[] = [];
  for (const resource of spec.cellularResources) {
    const base = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
    let next: string | undefined;
    do {
      const page: KubeList = await client.request<KubeList>('GET', `${base}/${resource.resource}`, {
        accept: METADATA_LIST,
        query: { limit: 5000, ...(next ? { continue: next } : {}) },
      });
      for (const item of page.items ?? []) {
        const namespace = item.metadata.namespace ?? '';
        keys.push(table.keyOf({ namespace, name: item.metadata.name ?? '' }, labels.get(namespace)));
      }
      next = page.metadata.continue;
    } while (next);
  }
  return keys;
}
