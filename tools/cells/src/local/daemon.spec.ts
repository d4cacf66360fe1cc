import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { E2eErrorCode } from '../errors.ts';
import { exitedError, isRunning, startDaemon, stopDaemon, tailLog } from './daemon.ts';

const dir = mkdtempSync(join(tmpdir(), 'cellfed-daemon-'));

describe('daemons', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs detached, logs to its file, and stops with its whole process group', async () => {
    const logFile = join(dir, 'tree.log');
    // A leader that forks a grandchild ignoring SIGTERM: stopping the leader alone would orphan it.
    const record = startDaemon({
      name: 'test/tree',
      command: 'bash',
      args: ['-c', `echo started; (trap '' TERM; sleep 300) & echo "child $!"; wait`],
      logFile,
    });
    await waitFor(() => /child \d+/.test(readFileSync(logFile, 'utf8')));
    const grandchild = Number(/child (\d+)/.exec(readFileSync(logFile, 'utf8'))![1]);
    expect(isRunning(record)).toBe(true);
    expect(isRunning({ pid: grandchild, startTicks: 0 })).toBe(true);

    await stopDaemon(record, 2_000);
    expect(isRunning(record)).toBe(false);
    await waitFor(() => !isRunning({ pid: grandchild, startTicks: 0 }));
    expect(isRunning({ pid: grandchild, startTicks: 0 })).toBe(false);
    await expect(stopDaemon(record)).resolves.toBeUndefined(); // idempotent
  });

  it('reports a crash with the end of its log', async () => {
    const logFile = join(dir, 'crash.log');
    const record = startDaemon({
      name: 'test/crash',
      command: 'bash',
      args: [
        '-c',
        'for i in $(seq 1 30); do echo "line $i"; done; echo "fatal: bind: address already in use" >&2; exit 3',
      ],
      logFile,
    });
    await waitFor(() => !isRunning(record));
    const error = exitedError(record);
    expect(error.code).toBe(E2eErrorCode.ProcessExited);
    expect(error.message).toMatch(/^test\/crash exited; last lines of .*crash\.log:\n/);
    expect(error.message).toContain('fatal: bind: address already in use');
    expect(error.message).not.toContain('line 5\n'); // only the tail
  });

  it('never signals a process that merely reuses a recorded pid', () => {
    const record = { pid: process.pid, startTicks: 1 }; // this process, but "started" at another time
    expect(isRunning(record)).toBe(false);
  });

  it('tails a log file, or says there is none', () => {
    const file = join(dir, 'tail.log');
    writeFileSync(file, Array.from({ length: 100 }, (_, i) => `l${i}`).join('\n'));
    expect(tailLog(file, 3)).toBe('l97\nl98\nl99');
    expect(tailLog(join(dir, 'absent.log'))).toBe('(no log)');
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}
