import { parseArgs } from 'node:util';

import { z } from 'zod';

import { PROVIDERS } from '../env-file.ts';
import { E2eError, E2eErrorCode } from '../errors.ts';

export const USAGE = `usage: npm run cells -- <up|down|status|run|add-cell|remove-cell|kill-cell> [options]
  up           start the router control plane and N cells; prints the path of env.json
  run          up, then the cell router and both controllers; prints the kubeconfig for kubectl; Ctrl-C
               stops it all
  down         stop everything up started in --dir
  status       print env.json and each process's resident memory (local provider)
  add-cell     start one more cell and put its Secret in the control plane; prints its id
  remove-cell  stop the cell --cell names and forget it
  kill-cell    kill the apiserver and etcd of the cell --cell names at once: a failed cell
options:
  --cell ID                   the cell remove-cell stops or kill-cell kills
  --dir DIR                   environment directory (default tmp/cells)
  --cells N                   number of cells, 1..16 (default 3)
  --provider local|kind       local processes or kind clusters (default local; after up, the one env.json
                              names)
  --no-controller-manager     do not run kube-controller-manager (local)
  --image IMAGE               image to load into the kind control plane, whose chart runs it (repeatable;
                              default with npm run cells: the router's and controllers', built here)
  --node-image IMAGE          kind's node image (default: kind's own; with npm run cells where kind is
                              not installed, the one scripts/kind-node-image.sh builds)
  --tools DIR                 directory of the built tools (default $CELLFED_TOOLS_BIN)
  --runtime-root DIR          where etcd keeps its data (local; default /dev/shm, a tmpfs)
  --router-port N             the router's port with run (default 6443; 0 picks a free one)
  --log-level LEVEL           pino level (default info)`;

const CellsArgsSchema = z.object({
  command: z.enum(['up', 'down', 'status', 'run', 'add-cell', 'remove-cell', 'kill-cell'], {
    error: (issue) =>
      `unknown command "${String(issue.input)}" (up, down, status, run, add-cell, remove-cell or kill-cell)`,
  }),
  cell: z.string().min(1).optional(),
  dir: z.string().min(1).default('tmp/cells'),
  cells: z.coerce
    .number({ error: '--cells must be a number' })
    .int({ error: '--cells must be a whole number' })
    .min(1, { error: '--cells must be at least 1' })
    .max(16, { error: '--cells must be at most 16' })
    .default(3),
  provider: z
    .enum(PROVIDERS, { error: (issue) => `--provider must be local or kind; got "${String(issue.input)}"` })
    .default('local'),
  controllerManager: z.boolean().default(true),
  images: z.array(z.string().min(1)).default([]),
  nodeImage: z.string().min(1).optional(),
  tools: z.string().optional(),
  runtimeRoot: z.string().min(1).optional(),
  routerPort: z.coerce
    .number({ error: '--router-port must be a number' })
    .int({ error: '--router-port must be a whole number' })
    .min(0, { error: '--router-port must be 0 to 65535' })
    .max(65535, { error: '--router-port must be 0 to 65535' })
    .default(6443),
  logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});

export type CellsArgs = z.output<typeof CellsArgsSchema>;

/** Parses the command line once; every mistake is one readable line in an E2eError. */
export function parseCellsArgs(argv: readonly string[], env: NodeJS.ProcessEnv): CellsArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        dir: { type: 'string' },
        cell: { type: 'string' },
        cells: { type: 'string' },
        provider: { type: 'string' },
        'no-controller-manager': { type: 'boolean' },
        image: { type: 'string', multiple: true },
        'node-image': { type: 'string' },
        tools: { type: 'string' },
        'runtime-root': { type: 'string' },
        'log-level': { type: 'string' },
        'router-port': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new E2eError(E2eErrorCode.InvalidArguments, (error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) throw new E2eError(E2eErrorCode.InvalidArguments, USAGE);
  if (positionals.length > 1) {
    throw new E2eError(E2eErrorCode.InvalidArguments, `one command expected; got ${positionals.join(' ')}`);
  }
  const result = CellsArgsSchema.safeParse({
    command: positionals[0],
    cell: values.cell,
    dir: values.dir,
    cells: values.cells,
    provider: values.provider,
    controllerManager: !values['no-controller-manager'],
    images: values.image,
    nodeImage: values['node-image'],
    tools: values.tools ?? env['CELLFED_TOOLS_BIN'],
    runtimeRoot: values['runtime-root'],
    routerPort: values['router-port'],
    logLevel: values['log-level'],
  });
  if (!result.success) {
    throw new E2eError(
      E2eErrorCode.InvalidArguments,
      result.error.issues.map((issue) => issue.message).join('; '),
    );
  }
  if ((result.data.command === 'remove-cell' || result.data.command === 'kill-cell') && !result.data.cell) {
    throw new E2eError(E2eErrorCode.InvalidArguments, `${result.data.command} needs --cell ID`);
  }
  return result.data;
}
