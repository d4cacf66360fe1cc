import { E2eErrorCode } from '../errors.ts';
import { parseCellsArgs } from './cells-args.ts';

describe('parseCellsArgs', () => {
  it('defaults to 3 local cells in tmp/cells with kube-controller-manager', () => {
    expect(parseCellsArgs(['up'], {})).toEqual({
      command: 'up',
      dir: 'tmp/cells',
      cells: 3,
      provider: 'local',
      controllerManager: true,
      images: [],
      tools: undefined,
      runtimeRoot: undefined,
      routerPort: 6443,
      logLevel: 'info',
    });
  });

  it('reads every option, and the tools directory from CELLFED_TOOLS_BIN unless --tools says otherwise', () => {
    const args = parseCellsArgs(
      [
        'up',
        '--cells',
        '5',
        '--provider',
        'kind',
        '--dir',
        '/x',
        '--no-controller-manager',
        '--image',
        'a:1',
        '--image',
        'b:2',
        '--node-image',
        'kindest/node:cellfed',
      ],
      { CELLFED_TOOLS_BIN: '/tools' },
    );
    expect(args).toMatchObject({
      cells: 5,
      provider: 'kind',
      dir: '/x',
      controllerManager: false,
      images: ['a:1', 'b:2'],
      nodeImage: 'kindest/node:cellfed',
      tools: '/tools',
    });
    expect(parseCellsArgs(['run', '--router-port', '0'], {}).routerPort).toBe(0);
    expect(parseCellsArgs(['remove-cell', '--cell', 'cell-4'], {})).toMatchObject({
      command: 'remove-cell',
      cell: 'cell-4',
    });
    expect(parseCellsArgs(['down', '--tools', '/mine'], { CELLFED_TOOLS_BIN: '/tools' }).tools).toBe('/mine');
  });

  it.each([
    [['up', '--cells', '0'], '--cells must be at least 1'],
    [['up', '--cells', 'three'], '--cells must be a number'],
    [['up', '--cells', '2.5'], '--cells must be a whole number'],
    [['up', '--provider', 'docker'], '--provider must be local or kind; got "docker"'],
    [['start'], 'unknown command "start" (up, down, status, run, add-cell, remove-cell or kill-cell)'],
    [['remove-cell'], 'remove-cell needs --cell ID'],
    [['kill-cell'], 'kill-cell needs --cell ID'],
    [['run', '--router-port', '70000'], '--router-port must be 0 to 65535'],
    [['up', 'down'], 'one command expected; got up down'],
    [['up', '--bogus'], "Unknown option '--bogus'"],
    [[], 'usage: npm run cells'],
  ])('%j fails with one readable line', (argv, message) => {
    expect(() => parseCellsArgs(argv, {})).toThrow(
      expect.objectContaining({
        code: E2eErrorCode.InvalidArguments,
        message: expect.stringContaining(message),
      }),
    );
  });
});
