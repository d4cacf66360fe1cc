import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';

import { E2eError, E2eErrorCode } from '../errors.ts';
import { startComponent } from './apiserver-processes.ts';
import { isRunning, stopDaemon } from './daemon.ts';
import { readLocalState, writeLocalState, type ApiserverState, type Component } from './local-state.ts';

/**
 * Stops and restarts single processes of a running local environment, for fault tests: "kill cell-2's
 * apiserver", "restart cell-1's etcd". Works from any process that can read DIR, like `down`.
 */
export class LocalCells {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  static open(dir: string): LocalCells {
    const cells = new LocalCells(resolve(dir));
    readLocalState(cells.dir); // fail now, with the reason, if there is no local environment here
    return cells;
  }

  ids(): string[] {
    return Object.keys(readLocalState(this.dir).apiservers);
  }

  isRunning(id: string, component: Component): boolean {
    const record = this.apiserver(id).daemons[component];
    return record !== undefined && isRunning(record);
  }

  /** Stops one process (SIGTERM, SIGKILL after `graceMs`); stopping a stopped process does nothing. */
  async stop(id: string, component: Component, graceMs?: number): Promise<void> {
    const record = this.apiserver(id).daemons[component];
    if (record) await stopDaemon(record, graceMs);
  }

  /** Starts a stopped process again with its original command line and waits until it is ready. */
  async start(id: string, component: Component, signal?: AbortSignal): Promise<void> {
    const state = readLocalState(this.dir);
    const apiserver = state.apiservers[id];
    const record = apiserver?.daemons[component];
    if (!apiserver || !record) {
      throw new E2eError(
        E2eErrorCode.InvalidEnvironment,
        `${id}/${component} was never started in ${this.dir}`,
      );
    }
    if (isRunning(record)) return;
    const { pid: _pid, startTicks: _ticks, ...spec } = record;
    await startComponent(apiserver, component, spec, {
      signal,
      onStarted: (started) => {
        apiserver.daemons[component] = started;
        writeLocalState(this.dir, state);
      },
    });
  }

  async restart(id: string, component: Component, graceMs?: number, signal?: AbortSignal): Promise<void> {
    await this.stop(id, component, graceMs);
    await this.start(id, component, signal);
  }

  /**
   * Deletes a cell's etcd data entirely (a disk lost): its apiserver and etcd are stopped first. Started
   * again, the cell is an empty apiserver under the same id, address and certificates.
   */
  async wipe(id: string): Promise<void> {
    await this.stop(id, 'kube-apiserver', 0);
    await this.stop(id, 'etcd', 0);
    rmSync(this.apiserver(id).etcdDataDir, { recursive: true, force: true });
  }

  /** Resident memory in bytes of each running process of `id` (from /proc). */
  residentMemory(id: string): Partial<Record<Component, number>> {
    const result: Partial<Record<Component, number>> = {};
    for (const [component, record] of Object.entries(this.apiserver(id).daemons)) {
      if (!record || !isRunning(record)) continue;
      const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${record.pid}/status`, 'utf8'));
      if (match) result[component as Component] = Number(match[1]) * 1024;
    }
    return result;
  }

  private apiserver(id: string): ApiserverState {
    const apiserver = readLocalState(this.dir).apiservers[id];
    if (!apiserver) {
      throw new E2eError(E2eErrorCode.InvalidEnvironment, `no apiserver "${id}" in ${this.dir}`);
    }
    return apiserver;
  }
}
