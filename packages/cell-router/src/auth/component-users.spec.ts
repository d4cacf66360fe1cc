import { ApiError, type EngagedCell, type KubeClient } from '@cellfed/controller-kit';
import { COMPONENT_USERS_ANNOTATION } from '@cellfed/api';
import { FakeClock, flushPromises, memoryLogger } from '@cellfed/controller-kit/testing';

import { ComponentUsers } from './component-users.ts';

/**
 * An engaged cell whose SelfSubjectReviews answer `answers` in turn (an Error is thrown), and whose marks
 * policy exempts `exempt.users` (none written yet while undefined).
 */
function cell(id: string, answers: (string | Error)[]) {
  const controller = new AbortController();
  const asked: string[] = [];
  const exempt: { users?: string[] } = {};
  const client = {
    request: async (method: string, path: string) => {
      asked.push(`${method} ${path}`);
      if (method === 'GET') {
        if (!exempt.users) throw new ApiError(404, { reason: 'NotFound' }, 'GET');
        return { metadata: { annotations: { [COMPONENT_USERS_ANNOTATION]: JSON.stringify(exempt.users) } } };
      }
      const answer = answers.shift() ?? new Error('no more answers');
      if (answer instanceof Error) throw answer;
      return { status: { userInfo: { username: answer } } };
    },
  } as unknown as KubeClient;
  const engaged = { id, client, signal: controller.signal } as unknown as EngagedCell;
  return { engaged, asked, exempt, disengage: () => controller.abort() };
}

describe('ComponentUsers', () => {
  it('refuses the names it is given, and its own in each cell once the cell says it, until the cell goes', async () => {
    const clock = new FakeClock();
    const { logger, lines } = memoryLogger();
    const users = new ComponentUsers({
      configured: ['cellfed-backup-controller'],
      routerCellUser: 'cellfed-router',
      logger,
      clock,
      retryMs: 1_000,
    });
    expect(users.has('cellfed-backup-controller')).toBe(true);
    const one = cell('cell-1', [new Error('connection refused'), 'system:serviceaccount:cellfed:shared']);
    const engaging = users.engage(one.engaged);
    await flushPromises();
    // Not known yet: asked again after the retry period.
    expect(users.has('system:serviceaccount:cellfed:shared')).toBe(false);
    await clock.advance(1_000);
    expect(one.asked.filter((call) => call.startsWith('POST'))).toEqual([
      'POST /apis/authentication.k8s.io/v1/selfsubjectreviews',
      'POST /apis/authentication.k8s.io/v1/selfsubjectreviews',
    ]);
    expect(users.has('system:serviceaccount:cellfed:shared')).toBe(true);
    expect(users.has('alice')).toBe(false);
    // A name other than --router-cell-user: the cells exempt the configured one, so it is said.
    expect(lines.some((line) => String(line['msg']).includes('another name than --router-cell-user'))).toBe(
      true,
    );
    one.disengage();
    await engaging;
    expect(users.has('system:serviceaccount:cellfed:shared')).toBe(false);
    expect(users.has('cellfed-backup-controller')).toBe(true);
  });

  it('refuses every name a cell’s marks policy exempts, as the policy says it now', async () => {
    const clock = new FakeClock();
    const users = new ComponentUsers({
      configured: [],
      logger: memoryLogger().logger,
      clock,
      policyRefreshMs: 30_000,
    });
    const one = cell('cell-1', ['cellfed-router']);
    const engaging = users.engage(one.engaged);
    await flushPromises();
    // No policy yet: only its own name.
    expect(users.has('cellfed-router')).toBe(true);
    expect(users.has('rebalancer-as-the-cell-knows-it')).toBe(false);
    one.exempt.users = ['rebalancer-as-the-cell-knows-it', 'cellfed-backup-controller'];
    await clock.advance(30_000);
    expect(users.has('rebalancer-as-the-cell-knows-it')).toBe(true);
    expect(users.has('cellfed-backup-controller')).toBe(true);
    one.exempt.users = ['cellfed-backup-controller'];
    await clock.advance(30_000);
    expect(users.has('rebalancer-as-the-cell-knows-it')).toBe(false);
    one.disengage();
    await engaging;
    expect(users.has('cellfed-backup-controller')).toBe(false);
  });
});
