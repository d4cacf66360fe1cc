import { CellsCliErrorCode } from './errors.ts';
import { parseCli } from './cli-args.ts';

describe('parseCli', () => {
  it('reads the commands and the kubeconfig conventions', () => {
    expect(parseCli(['status', '--context', 'prod'])).toEqual({
      command: { command: 'status' },
      options: { kubeconfig: undefined, context: 'prod', cellSet: 'default' },
    });
    expect(parseCli(['where', 'deploy/web', '-n', 'shop']).command).toEqual({
      command: 'where',
      resource: 'deploy',
      name: 'web',
      namespace: 'shop',
    });
    expect(parseCli(['backup', 'cm/settings']).command).toEqual({
      command: 'backup',
      resource: 'cm',
      name: 'settings',
      namespace: undefined,
      cellContexts: {},
    });
    expect(
      parseCli([
        'backup',
        'cm/settings',
        '--cell-context',
        'cell-2=ops@cell-2',
        '--cell-context',
        'cell-3=x=y',
      ]).command,
    ).toMatchObject({ cellContexts: { 'cell-2': 'ops@cell-2', 'cell-3': 'x=y' } });
    expect(parseCli(['plan', '--add', 'cell-4=2']).command).toEqual({
      command: 'plan',
      change: { kind: 'add', id: 'cell-4', weight: 2 },
    });
    expect(parseCli(['plan', '--add', 'cell-4']).command).toMatchObject({ change: { weight: 1 } });
    expect(parseCli(['plan', '--drain', 'cell-2']).command).toEqual({
      command: 'plan',
      change: { kind: 'drain', id: 'cell-2' },
    });
    expect(parseCli(['add', 'cell-4', '--secret', 'four']).command).toMatchObject({
      edit: { kind: 'add', id: 'cell-4', secret: { name: 'four' } },
    });
    expect(parseCli(['add', 'cell-4', '--secret', 'ops/four']).command).toMatchObject({
      edit: { secret: { namespace: 'ops', name: 'four' } },
    });
    expect(parseCli(['weight', 'cell-2=3', '--wait']).command).toEqual({
      command: 'edit',
      edit: { kind: 'weight', id: 'cell-2', weight: 3 },
      wait: true,
      timeoutMs: 30 * 60_000,
    });
  });

  it.each([
    [[], 'no command given'],
    [['move'], 'unknown command "move"'],
    [['where', 'web'], 'where needs RESOURCE/NAME'],
    [['backup', 'deploy/'], 'backup needs RESOURCE/NAME'],
    [['backup', 'cm/a', '--cell-context', 'cell-2'], '--cell-context needs CELL=CONTEXT'],
    [['backup', 'cm/a', '--cell-context', '=ctx'], '--cell-context needs CELL=CONTEXT'],
    [['backup', 'cm/a', '--cell-context', 'Cell_2=ctx'], '--cell-context needs CELL=CONTEXT'],
    [
      ['backup', 'cm/a', '--cell-context', 'c=a', '--cell-context', 'c=b'],
      '--cell-context names two contexts for c',
    ],
    [['where', 'cm/a', '--cell-context', 'c=a'], '--cell-context is for backup only'],
    [['plan'], 'plan needs exactly one of'],
    [['plan', '--add', 'c=0'], '--add: the weight must be a whole number from 1; got "0"'],
    [['plan', '--weight', 'c'], '--weight needs ID=WEIGHT'],
    [['status', '--cellset', 'Bad_Name'], '--cellset must be a CellSet name'],
    [['status', '--nope'], "Unknown option '--nope'"],
    [['drain'], 'drain needs a cell id'],
    [['add', 'Cell_4'], 'add needs a cell id'],
    [['add', 'c', '--secret', 'x/'], '--secret needs NAME or NAMESPACE/NAME'],
    [['add', 'c', '--secret', 'a/b/c'], '--secret needs NAME or NAMESPACE/NAME'],
    [['rejoin', 'c', '--wait', '--timeout', 'soon'], '--timeout must be a duration'],
    [['weight', 'cell-2'], 'weight needs ID=WEIGHT'],
    [['weight', 'cell-2=heavy'], 'weight: the weight must be a whole number from 1; got "heavy"'],
  ])('refuses %j with one readable line', (argv, message) => {
    expect(() => parseCli(argv)).toThrow(message);
    expect(() => parseCli(argv)).toThrow(
      expect.objectContaining({ code: CellsCliErrorCode.InvalidArguments }) as Error,
    );
  });
});
