import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * Records what a proof-campaign test measured, as `proof-NAME.json` beside the benchmark results:
 * `bench/results/` when the campaign is run for the record (`npx nx run e2e:proof` sets
 * CELLFED_PROOF_RESULTS_DIR), `tmp/proof/` in an ordinary test run.
 */
export function recordProof(
  name: string,
  result: {
    proof: string;
    goals: Record<string, string>;
    figures: Record<string, number>;
    measured?: unknown;
  },
): void {
  const dir = process.env['CELLFED_PROOF_RESULTS_DIR'] ?? join(ROOT, 'tmp', 'proof');
  mkdirSync(dir, { recursive: true });
  const machine = { cpus: availableParallelism(), model: cpus()[0]?.model.split(' ').slice(0, 2).join(' ') };
  writeFileSync(
    join(dir, `proof-${name}.json`),
    `${JSON.stringify({ benchmark: result.proof, date: new Date().toISOString(), machine, goals: result.goals, figures: result.figures, measured: result.measured }, null, 2)}\n`,
  );
  process.stdout.write(`proof ${name}: ${JSON.stringify(result.figures)}\n`);
}
