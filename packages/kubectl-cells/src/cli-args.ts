import { parseArgs } from 'node:util';

import { z } from 'zod';

import type { CellEdit } from './cell-edit.ts';
import type { CellChange } from './plan.ts';
import { CellsCliError, CellsCliErrorCode } from './errors.ts';

export const USAGE = `usage: kubectl cells COMMAND [options]
  status                              the cells, their state, weight and objects, and the rebalance
  where RESOURCE/NAME [-n NAMESPACE]  the cell an object lives in, its backup cell, whether it moves
  backup RESOURCE/NAME [-n NAMESPACE] [--cell-context CELL=CONTEXT ...]
                                      the object as its backup holds it, as JSON, read in the backup cell
                                      with your own credentials there: your kubeconfig's context CONTEXT
                                      (default: the context named as the cell)
  plan --add ID[=WEIGHT] | --drain ID | --weight ID=WEIGHT
                                      what the change would move, from where to where, beside the optimum
  add ID [--weight N] [--secret [NS/]NAME] [--wait]
                                      a new cell, Joining; its kubeconfig Secret ID-kubeconfig (or NAME) in
                                      each component's credentials namespace (or NS/NAME: one Secret for the
                                      components that share namespace NS)
  drain ID [--wait]                   the cell's objects move out, then it leaves the CellSet
  down ID [--wait]                    the cell failed: its keys are served from their backups, then promoted
  rejoin ID [--wait]                  a Down cell comes back as Joining (its stale copies are deleted first)
  weight ID=WEIGHT [--wait]           a Normal cell's new weight; objects move to or from it as for a join
options:
  --kubeconfig FILE   (default: $KUBECONFIG, then ~/.kube/config)
  --context NAME      (default: the kubeconfig's current context)
  --cellset NAME      (default: default)
  --wait              wait until every router routes by the change, then follow the rebalance until it
                      is done, with progress on stderr
  --timeout DURATION  give up waiting after this long (default 30m)`;

const weightOf = (text: string | undefined, flag: string) => {
  if (text === undefined) return 1;
  const weight = Number(text);
  if (!Number.isInteger(weight) || weight < 1)
    throw new CellsCliError(
      CellsCliErrorCode.InvalidArguments,
      `${flag}: the weight must be a whole number from 1; got "${text}"`,
    );
  return weight;
};

const durationMs = (text: string) => {
  const match = /^(\d+)(s|m|h)$/.exec(text);
  if (!match)
    throw new CellsCliError(
      CellsCliErrorCode.InvalidArguments,
      `--timeout must be a duration such as 90s, 30m or 2h; got "${text}"`,
    );
  return Number(match[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 's' | 'm' | 'h'];
};

/** A cell id: a DNS-1123 label, as the CellSet's schema says. */
const CELL_ID = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** `--cell-context CELL=CONTEXT`, repeated: one context per cell. */
function cellContextsOf(given: readonly string[]): Record<string, string> {
  const contexts: Record<string, string> = {};
  for (const entry of given) {
    const equals = entry.indexOf('=');
    const cell = entry.slice(0, equals);
    const context = entry.slice(equals + 1);
    if (equals <= 0 || !context || !CELL_ID.test(cell))
      throw new CellsCliError(
        CellsCliErrorCode.InvalidArguments,
        `--cell-context needs CELL=CONTEXT (a cell id, then a context of your kubeconfig); got "${entry}"`,
      );
    if (contexts[cell] !== undefined && contexts[cell] !== context)
      throw new CellsCliError(
        CellsCliErrorCode.InvalidArguments,
        `--cell-context names two contexts for ${cell}`,
      );
    contexts[cell] = context;
  }
  return contexts;
}

/** What the command line asks for, read once. */
export type CliCommand =
  | { command: 'status' }
  | { command: 'where'; resource: string; name: string; namespace: string | undefined }
  | {
      command: 'backup';
      resource: string;
      name: string;
      namespace: string | undefined;
      /** The operator's kubeconfig context for a cell, where it is not the context named as the cell. */
      cellContexts: Record<string, string>;
    }
  | { command: 'plan'; change: CellChange }
  | { command: 'edit'; edit: CellEdit; wait: boolean; timeoutMs: number };

export interface CliOptions {
  kubeconfig: string | undefined;
  context: string | undefined;
  cellSet: string;
}

const Options = z.object({
  kubeconfig: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
  cellset: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { error: '--cellset must be a CellSet name' })
    .default('default'),
});

/** Reads argv (after `kubectl-cells`); throws one readable line for anything wrong. */
export function parseCli(argv: string[]): { command: CliCommand; options: CliOptions } {
  try {
    return parseCliOrThrow(argv);
  } catch (error) {
    if (error instanceof CellsCliError) throw error;
    // node's own parseArgs errors (an unknown option, a missing value): the same code, their first line.
    throw new CellsCliError(CellsCliErrorCode.InvalidArguments, (error as Error).message.split('\n')[0]!, {
      cause: error,
    });
  }
}

function parseCliOrThrow(argv: string[]): { command: CliCommand; options: CliOptions } {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      cellset: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      add: { type: 'string' },
      drain: { type: 'string' },
      weight: { type: 'string' },
      secret: { type: 'string' },
      'cell-context': { type: 'string', multiple: true },
      wait: { type: 'boolean' },
      timeout: { type: 'string' },
    },
  });
  const parsed = Options.safeParse({
    kubeconfig: values.kubeconfig,
    context: values.context,
    cellset: values.cellset,
  });
  if (!parsed.success)
    throw new CellsCliError(
      CellsCliErrorCode.InvalidArguments,
      parsed.error.issues.map((issue) => issue.message).join('; '),
    );
  const options = {
    kubeconfig: parsed.data.kubeconfig,
    context: parsed.data.context,
    cellSet: parsed.data.cellset,
  };
  const [verb, ...rest] = positionals;
  switch (verb) {
    case 'status':
      return { command: { command: 'status' }, options };
    case 'where':
    case 'backup': {
      if (verb === 'where' && values['cell-context'] !== undefined)
        throw new CellsCliError(CellsCliErrorCode.InvalidArguments, '--cell-context is for backup only');
      const target = rest[0];
      const slash = target?.indexOf('/') ?? -1;
      if (!target || slash <= 0 || slash === target.length - 1)
        throw new CellsCliError(
          CellsCliErrorCode.InvalidArguments,
          `${verb} needs RESOURCE/NAME, e.g. kubectl cells ${verb} deployment/web -n shop`,
        );
      const object = {
        resource: target.slice(0, slash),
        name: target.slice(slash + 1),
        namespace: values.namespace,
      };
      return {
        command:
          verb === 'where'
            ? { command: verb, ...object }
            : { command: verb, ...object, cellContexts: cellContextsOf(values['cell-context'] ?? []) },
        options,
      };
    }
    case 'plan': {
      const given = [values.add, values.drain, values.weight].filter((value) => value !== undefined);
      if (given.length !== 1)
        throw new CellsCliError(
          CellsCliErrorCode.InvalidArguments,
          'plan needs exactly one of --add ID[=WEIGHT], --drain ID, --weight ID=WEIGHT',
        );
      if (values.add !== undefined) {
        const [id, weight] = values.add.split('=');
        return {
          command: { command: 'plan', change: { kind: 'add', id: id!, weight: weightOf(weight, '--add') } },
          options,
        };
      }
      if (values.drain !== undefined)
        return { command: { command: 'plan', change: { kind: 'drain', id: values.drain } }, options };
      const [id, weight] = values.weight!.split('=');
      if (weight === undefined)
        throw new CellsCliError(CellsCliErrorCode.InvalidArguments, '--weight needs ID=WEIGHT');
      return {
        command: {
          command: 'plan',
          change: { kind: 'weight', id: id!, weight: weightOf(weight, '--weight') },
        },
        options,
      };
    }
    case 'weight': {
      const [id, weight] = (rest[0] ?? '').split('=');
      if (!id || !CELL_ID.test(id) || weight === undefined)
        throw new CellsCliError(
          CellsCliErrorCode.InvalidArguments,
          'weight needs ID=WEIGHT, e.g. weight cell-2=3',
        );
      return {
        command: {
          command: 'edit',
          edit: { kind: 'weight', id, weight: weightOf(weight, 'weight') },
          wait: values.wait === true,
          timeoutMs: durationMs(values.timeout ?? '30m'),
        },
        options,
      };
    }
    case 'add':
    case 'drain':
    case 'down':
    case 'rejoin': {
      const id = rest[0];
      if (!id || !CELL_ID.test(id))
        throw new CellsCliError(
          CellsCliErrorCode.InvalidArguments,
          `${verb} needs a cell id (a DNS-1123 label)`,
        );
      let edit: CellEdit;
      if (verb === 'add') {
        // NAME: each component's own Secret of that name; NAMESPACE/NAME: one Secret every component reads.
        const secret = values.secret?.split('/');
        if (values.secret !== undefined && (!secret || secret.length > 2 || secret.some((part) => !part)))
          throw new CellsCliError(
            CellsCliErrorCode.InvalidArguments,
            '--secret needs NAME or NAMESPACE/NAME',
          );
        edit = {
          kind: 'add',
          id,
          weight: values.weight === undefined ? 1 : weightOf(values.weight, '--weight'),
          ...(secret
            ? {
                secret:
                  secret.length === 2 ? { namespace: secret[0]!, name: secret[1]! } : { name: secret[0]! },
              }
            : {}),
        };
      } else edit = { kind: verb, id };
      return {
        command: {
          command: 'edit',
          edit,
          wait: values.wait === true,
          timeoutMs: durationMs(values.timeout ?? '30m'),
        },
        options,
      };
    }
    default:
      throw new CellsCliError(
        CellsCliErrorCode.InvalidArguments,
        verb ? `unknown command "${verb}"` : 'no command given',
      );
  }
}
