// `npx nx run cell-router:bench-auth`: writes bench/results/auth-fairness.json.
// Whether one tenant can lock another out of authentication and authorization. Tenant B reads one of its
// ConfigMaps at a fixed rate with its ServiceAccount's token, first alone (idle), then while tenant A floods:
// FLOOD_ACCOUNTS ServiceAccounts of A's namespace (each a valid token, none with a right, each request asking
// for another object: a SubjectAccessReview each) and made-up tokens (a TokenReview each), FLOOD_CONCURRENCY
// requests at a time, closed loop. B's token goes stale in the router's cache during each phase (10 s), so
// its TokenReview and SubjectAccessReviews are asked again while A's wait.
// Two arms, in one run: through the router (B's ConfigMap in the cell; reviews asked of the control plane),
// and straight to the control plane's kube-apiserver with the same RBAC (its own authenticator and flow
// control): the baseline. figures.routerFloodP99OverIdle is B's p99 during the flood over B's p99 alone
// (goal ≤ 2); the apiserver's own ratio beside it.
// Pinned (bench-kit's PINNING): apiservers and etcds on CPU 0, the router and this load generator on CPU 1.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

import { Agent, request } from 'undici';

import {
  BenchEnv,
  call,
  percentile,
  progress,
  round,
  writeResult,
  type Pinning,
  type Target,
} from '@cellfed/bench-kit';

const PHASE_SECONDS = Number(process.env['CELLFED_BENCH_PHASE_SECONDS'] ?? 20);
const TENANT_RATE = Number(process.env['CELLFED_BENCH_TENANT_RATE'] ?? 20);
const FLOOD_ACCOUNTS = Number(process.env['CELLFED_BENCH_FLOOD_ACCOUNTS'] ?? 200);
const FLOOD_CONCURRENCY = Number(process.env['CELLFED_BENCH_FLOOD_CONCURRENCY'] ?? 64);
const GOAL = 2;

const ARMS = ['router', 'apiserver'] as const;
type Arm = (typeof ARMS)[number];

interface Phase {
  latenciesMs: number[];
  codes: Record<string, number>;
}

/** A pool that trusts the control plane's CA and presents no certificate: callers here are their tokens. */
function tokenAgent(bench: BenchEnv): Agent {
  return new Agent({
    connect: { ca: readFileSync(join(bench.dir, 'pki', 'control-plane', 'ca.crt')) },
    connections: FLOOD_CONCURRENCY + 8,
  });
}

async function get(base: string, agent: Agent, token: string, path: string): Promise<number> {
  const response = await request(`${base}${path}`, {
    dispatcher: agent,
    headers: { accept: 'application/json', authorization: `Bearer ${token}` },
  });
  await response.body.dump();
  return response.statusCode;
}

/** B's GETs at TENANT_RATE for PHASE_SECONDS (open loop: each at its time, whatever the others do). */
async function tenantPhase(base: string, agent: Agent, token: string): Promise<Phase> {
  const phase: Phase = { latenciesMs: [], codes: {} };
  const pending: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < TENANT_RATE * PHASE_SECONDS; i++) {
    const wait = started + (i * 1000) / TENANT_RATE - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      (async () => {
        const t0 = performance.now();
        const code = await get(base, agent, token, '/api/v1/namespaces/tenant-b/configmaps/settings');
        phase.latenciesMs.push(performance.now() - t0);
        phase.codes[code] = (phase.codes[code] ?? 0) + 1;
      })(),
    );
  }
  await Promise.all(pending);
  return phase;
}

/** A's flood until `stop`: every 4th request a made-up token, the others A's accounts asking for new names. */
async function flood(
  base: string,
  agent: Agent,
  tokens: readonly string[],
  stop: () => boolean,
): Promise<Record<string, number>> {
  const codes: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: FLOOD_CONCURRENCY }, async () => {
      while (!stop()) {
        const i = next++;
        const token = i % 4 === 0 ? randomBytes(24).toString('base64url') : tokens[i % tokens.length]!;
        const code = await get(base, agent, token, `/api/v1/namespaces/tenant-b/configmaps/other-${i}`).catch(
          () => 0,
        );
        codes[code] = (codes[code] ?? 0) + 1;
      }
    }),
  );
  return codes;
}

const summarize = (phase: Phase) => {
  const sorted = [...phase.latenciesMs].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    p50Ms: round(percentile(sorted, 50), 2),
    p99Ms: round(percentile(sorted, 99), 2),
    codes: phase.codes,
  };
};

const results = {} as Record<
  Arm,
  {
    idle: ReturnType<typeof summarize>;
    flood: ReturnType<typeof summarize>;
    floodCodes: Record<string, number>;
  }
>;
let pinning: Pinning | undefined;
const bench = BenchEnv.up('auth-fairness', 1);
try {
  const cell = bench.env.cells[0]!;
  const router = await bench.startRouter();
  pinning = bench.pinForComparison([router.child]);
  progress(`pinning: ${JSON.stringify(pinning)}`);
  const controlPlane: Target = { base: bench.env.controlPlane.url, agent: bench.agent('control-plane') };
  const inCell: Target = { base: cell.url, agent: bench.agent(cell.id) };
  const routed: Target = { base: router.url, agent: bench.agent('control-plane') };

  // RBAC in the control plane (the router's reviews, the apiserver arm) and in the cell (what the router's
  // impersonated read meets there; the rebalance controller mirrors it in a federation).
  const reader = {
    role: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'reader', namespace: 'tenant-b' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    },
    binding: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'reader', namespace: 'tenant-b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'tenant-b' }],
    },
  };
  for (const target of [controlPlane, inCell]) {
    for (const name of ['tenant-a', 'tenant-b'])
      await call(target, 'POST', '/api/v1/namespaces', { metadata: { name } });
    await call(target, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/tenant-b/roles', reader.role);
    await call(
      target,
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/tenant-b/rolebindings',
      reader.binding,
    );
  }
  const settings = { metadata: { name: 'settings' }, data: { value: 'x'.repeat(256) } };
  await call(controlPlane, 'POST', '/api/v1/namespaces/tenant-b/configmaps', settings);
  await call(routed, 'POST', '/api/v1/namespaces/tenant-b/configmaps', settings);

  const tokenOf = async (namespace: string, name: string) => {
    await call(controlPlane, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
      metadata: { name },
    });
    const review = JSON.parse(
      await call(controlPlane, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      }),
    ) as { status: { token: string } };
    return review.status.token;
  };
  const tenant = await tokenOf('tenant-b', 'reader');
  const floodTokens: string[] = [];
  for (let i = 0; i < FLOOD_ACCOUNTS; i++) floodTokens.push(await tokenOf('tenant-a', `minted-${i}`));
  progress(`tenant B's reader and ${FLOOD_ACCOUNTS} of tenant A's ServiceAccounts have tokens`);

  const bases: Record<Arm, string> = { router: router.url, apiserver: bench.env.controlPlane.url };
  for (const arm of ARMS) {
    const agent = tokenAgent(bench);
    const check = await get(bases[arm], agent, tenant, '/api/v1/namespaces/tenant-b/configmaps/settings');
    if (check !== 200) throw new Error(`${arm}: tenant B's read answered ${check}, not 200`);
    const idle = await tenantPhase(bases[arm], agent, tenant);
    progress(`${arm}: idle p99 ${summarize(idle).p99Ms} ms`);
    let stopped = false;
    const flooding = flood(bases[arm], tokenAgent(bench), floodTokens, () => stopped);
    // The flood fills the queues before B's requests are measured.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const during = await tenantPhase(bases[arm], agent, tenant);
    stopped = true;
    const floodCodes = await flooding;
    results[arm] = { idle: summarize(idle), flood: summarize(during), floodCodes };
    progress(`${arm}: flood p99 ${results[arm].flood.p99Ms} ms; flood answers ${JSON.stringify(floodCodes)}`);
    await agent.close();
  }
} finally {
  await bench.down();
}

const ratio = (arm: Arm) => round(results[arm].flood.p99Ms / Math.max(0.1, results[arm].idle.p99Ms), 2);
const tenantErrors = (arm: Arm) =>
  Object.entries(results[arm].flood.codes)
    .filter(([code]) => code !== '200')
    .reduce((sum, [, count]) => sum + count, 0);
const figures = {
  routerFloodP99OverIdle: ratio('router'),
  apiserverFloodP99OverIdle: ratio('apiserver'),
  routerTenantFailuresDuringFlood: tenantErrors('router'),
  apiserverTenantFailuresDuringFlood: tenantErrors('apiserver'),
};
const goals = { routerFloodP99OverIdle: `<= ${GOAL}`, routerTenantFailuresDuringFlood: '= 0' };
const result = {
  benchmark: `tenant B's reads alone and under tenant A's authentication flood (${FLOOD_ACCOUNTS} ServiceAccounts and made-up tokens, ${FLOOD_CONCURRENCY} at a time), through the router and straight to one kube-apiserver`,
  date: new Date().toISOString(),
  machine: { node: process.version, cpus: cpus().length, model: cpus()[0]?.model },
  pinning,
  load: {
    phaseSeconds: PHASE_SECONDS,
    tenantPerSecond: TENANT_RATE,
    floodAccounts: FLOOD_ACCOUNTS,
    floodConcurrency: FLOOD_CONCURRENCY,
  },
  goals,
  figures,
  met: {
    routerFloodP99OverIdle: figures.routerFloodP99OverIdle <= GOAL,
    routerTenantFailuresDuringFlood: figures.routerTenantFailuresDuringFlood === 0,
  },
  arms: results,
};
writeResult('auth-fairness', result, figures);
