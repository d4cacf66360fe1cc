import type { EngagedCell, KubeClient } from '@cellfed/controller-kit';
import { FakeClock, flushPromises, memoryLogger } from '@cellfed/controller-kit/testing';

import { ComponentUsers } from './component-users.ts';

/** An engaged cell whose SelfSubjectReviews answer `answers` in turn (an Error is thrown). */
function cell(id: string, answers: (string | Error)[]) {
  const controller = new AbortController();
  const asked: string[] = [];
  const client = {
    request: async (method: string, path: string) => {
      asked.push(`${method} ${path}`);
      const answer = answers.shift() ?? new Error('no more answers');
      if (answer instanceof Error) throw answer;
      return { status: { userInfo: { username: answer } } };
    },
  } as unknown as KubeClient;
  const engaged = { id, client, signal: controller.signal } as unknown as EngagedCell;
  return { engaged, asked, disengage: () => controller.abort() };
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
    await engaging;
    expect(one.asked).toEqual([
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
    expect(users.has('system:serviceaccount:cellfed:shared')).toBe(false);
    expect(users.has('cellfed-backup-controller')).toBe(true);
  });
});
