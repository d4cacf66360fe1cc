import { readFileSync } from 'node:fs';

import { CONTROLLER_FLAGS, flagRows, readmeFlagRows } from '@cellfed/controller-kit';

import { BACKUP_FLAGS, parseBackupArgs } from './config.ts';

describe('parseBackupArgs', () => {
  it('has the documented defaults', () => {
    const config = parseBackupArgs([]);
    expect(config.autoDownAfterMs).toBeUndefined();
    expect(config).toMatchObject({
      cellSetName: 'default',
      secretNamespace: 'cellfed-system',
      workers: 16,
      resyncMs: 600_000,
      resyncQps: 500,
    });
    expect(config.manager.leaderElection).toMatchObject({
      enabled: true,
      namespace: 'cellfed-system',
      name: 'cellfed-backup-controller-default',
    });
  });

  it('reads every flag', () => {
    const config = parseBackupArgs(
      '--cellset x --workers 4 --resync 30s --resync-qps 50 --auto-down-after 2m --leader-elect false --http-port 0'.split(
        ' ',
      ),
    );
    expect(config).toMatchObject({
      cellSetName: 'x',
      workers: 4,
      resyncMs: 30_000,
      resyncQps: 50,
      autoDownAfterMs: 120_000,
    });
    expect(config.manager).toMatchObject({ httpPort: 0 });
    expect(config.manager.leaderElection).toMatchObject({
      enabled: false,
      name: 'cellfed-backup-controller-x',
    });
  });

  it.each([
    [['--workers', '0'], /--workers must be at least 1/],
    [['--resync', 'often'], /--resync must be a duration/],
    [['--leader-elect', 'yes'], /--leader-elect must be true or false/],
    [['--nope'], /Unknown option '--nope'/],
  ])('refuses %j with one readable line', (argv, message) => {
    expect(() => parseBackupArgs(argv)).toThrow(message);
  });
});

describe('the flags table in the README', () => {
  it('is the flags as declared, each with its help and default (npm run docs:flags writes it)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readmeFlagRows(readme)).toEqual(flagRows([...BACKUP_FLAGS, ...CONTROLLER_FLAGS]));
  });
});
