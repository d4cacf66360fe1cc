import { readFileSync } from 'node:fs';

import { flagRows, readmeFlagRows } from '@cellfed/controller-kit';

import { ROUTER_FLAGS, parseRouterArgs } from './config.ts';

describe('parseRouterArgs', () => {
  it('takes the serving certificate from files or from a Secret', () => {
    const files = parseRouterArgs(['--tls-cert-file', 'c.pem', '--tls-key-file', 'k.pem']);
    expect(files).toMatchObject({
      tlsCertFile: 'c.pem',
      tlsKeyFile: 'k.pem',
      port: 6443,
      cellSetName: 'default',
    });
    // Absent flags take their declared defaults; the kubeconfig's is the in-cluster account (none given).
    expect(files.kubeconfig).toBeUndefined();
    expect(files).toMatchObject({
      host: '0.0.0.0',
      maxRequestsInFlightPerCaller: 400,
      maxLongRunningPerCaller: 250,
      maxLongRunning: 1000,
    });
    expect(parseRouterArgs(['--tls-secret', 'cellfed-system/router-tls']).tlsSecret).toBe(
      'cellfed-system/router-tls',
    );
  });

  it("takes the components' cell users, which it refuses as callers", () => {
    const config = parseRouterArgs([
      ...[
        '--tls-secret',
        'a/b',
        '--router-cell-user',
        'system:serviceaccount:cellfed-system:cellfed-router-cell',
      ],
      ...['--backup-controller-cell-user', 'cellfed-backup-controller'],
    ]);
    expect(config).toMatchObject({
      routerCellUser: 'system:serviceaccount:cellfed-system:cellfed-router-cell',
      backupControllerCellUser: 'cellfed-backup-controller',
    });
    expect(config.rebalanceControllerCellUser).toBeUndefined();
  });

  it.each([
    [[], 'give --tls-cert-file and --tls-key-file, or --tls-secret'],
    [['--tls-cert-file', 'c.pem'], 'give --tls-cert-file and --tls-key-file, or --tls-secret'],
    [
      ['--tls-secret', 'a/b', '--tls-cert-file', 'c.pem'],
      'give --tls-cert-file and --tls-key-file, or --tls-secret',
    ],
    [['--tls-secret', 'no-slash'], '--tls-secret must be NAMESPACE/NAME'],
    [['--tls-secret', 'a/b', '--port', 'x'], 'port: --port must be a whole number'],
    [['--tls-secret', 'a/b', '--port', '70000'], 'port: --port must be at most 65535'],
    // A space at either end would be trimmed on its way to a cell: another name than the one refused.
    [
      ['--tls-secret', 'a/b', '--rebalance-controller-cell-user', 'cellfed-rebalance-controller '],
      '--rebalance-controller-cell-user must be a user name (no control character, no space at either end)',
    ],
  ])('%j fails with one readable line', (argv, message) => {
    expect(() => parseRouterArgs(argv)).toThrow(message);
  });
});

describe('the flags table in the README', () => {
  it('is the flags as declared, each with its help and default (npm run docs:flags writes it)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readmeFlagRows(readme)).toEqual(flagRows(ROUTER_FLAGS));
  });
});
