import { parseArgs } from 'node:util';

import { z } from 'zod';

import type { CellChange } from './plan.ts';

export const USAGE = `usage: kubectl cells COMMAND [options]
  status                              the cells, their state, weight and objects, and the rebalance
  where RESOURCE/NAME [-n NAMESPACE]  the cell an object lives in, its backup cell, whether it moves
  plan --add ID[=WEIGHT] | --drain ID | --weight ID=WEIGHT
                                      what the change would move, from where to where, beside the optimum
options:
  --kubeconfig FILE   (default: $KUBECONFIG, then ~/.kube/config)
  --context NAME      (default: the kubeconfig's current context)
  --cellset NAME      (default: default)`;

const weightOf = (text: string | undefined, flag: string) => {
  if (text === undefined) return 1;
  const weight = Number(text);
  if (!Number.isInteger(weight) || weight < 1)
    throw new Error(`${flag}: the weight must be a whole number from 1; got "${text}"`);
  return weight;
};

/** What the command line asks for, read once. */
export type CliCommand =
  | { command: 'status' }
  | { command: 'where'; resource: string; name: string; namespace: string | undefined }
  | { command: 'plan'; change: CellChange };

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
    },
  });
  const parsed = Options.safeParse(values);
  if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => issue.message).join('; '));
  const options = {
    kubeconfig: parsed.data.kubeconfig,
    context: parsed.data.context,
    cellSet: parsed.data.cellset,
  };
  const [verb, ...rest] = positionals;
  switch (verb) {
    case 'status':
      return { command: { command: 'status' }, options };
    case 'where': {
      const target = rest[0];
      const slash = target?.indexOf('/') ?? -1;
      if (!target || slash <= 0 || slash === target.length - 1)
        throw new Error('where needs RESOURCE/NAME, e.g. kubectl cells where deployment/web -n shop');
      return {
        command: {
          command: 'where',
          resource: target.slice(0, slash),
          name: target.slice(slash + 1),
          namespace: values.namespace,
        },
        options,
      };
    }
    case 'plan': {
      const given = [values.add, values.drain, values.weight].filter((value) => value !== undefined);
      if (given.length !== 1)
        throw new Error('plan needs exactly one of --add ID[=WEIGHT], --drain ID, --weight ID=WEIGHT');
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
      if (weight === undefined) throw new Error('--weight needs ID=WEIGHT');
      return {
        command: {
          command: 'plan',
          change: { kind: 'weight', id: id!, weight: weightOf(weight, '--weight') },
        },
        options,
      };
    }
    default:
      throw new Error(verb ? `unknown command "${verb}"` : 'no command given');
  }
}
