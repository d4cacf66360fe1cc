import { ApiError } from '@cellfed/controller-kit';
import { type KubeObject, FENCE_POLICY_NAME, MARKS_POLICY_NAME } from '@cellfed/federation';

import { ensureCellFence, ownUserName } from './cell-fence.ts';
import { RebalanceErrorCode } from '../errors.ts';

const FENCE_REFUSAL = new ApiError(
  403,
  {
    reason: 'Forbidden',
    message: `ValidatingAdmissionPolicy '${FENCE_POLICY_NAME}' with binding '${FENCE_POLICY_NAME}' denied request: probe`,
  },
  'POST /api/v1/namespaces',
);

/** A cell that keeps what is applied to it and answers the probe as `probe` says. */
function fakeCell(probe: () => unknown) {
  const stored = new Map<string, KubeObject>();
  const calls: { method: string; path: string; query?: unknown }[] = [];
  const request = async (method: string, path: string, options: { body?: string; query?: unknown } = {}) => {
    calls.push({ method, path, query: options.query });
    if (path.endsWith('/selfsubjectreviews')) return { status: { userInfo: { username: fake.user } } };
    if (path === '/api/v1/namespaces') return probe();
    if (method === 'GET') {
      const object = stored.get(path);
      if (!object) throw new ApiError(404, { reason: 'NotFound' }, `GET ${path}`);
      return object;
    }
    stored.set(path, JSON.parse(options.body ?? '{}') as KubeObject);
    return stored.get(path);
  };
  const fake = { client: { request } as never, stored, calls, user: 'cellfed-components' };
  return fake;
}

const signal = new AbortController().signal;
/** The fence, for the user the cell says the controller is. */
const fence = async (cell: ReturnType<typeof fakeCell>) =>
  ensureCellFence(
    cell.client,
    {
      controllers: [await ownUserName(cell.client, signal)],
      components: [await ownUserName(cell.client, signal), 'cellfed-router'],
    },
    signal,
  );

describe('ensureCellFence', () => {
  it('applies the policies and bindings exempting the controllers from the fence and every component from the marks policy, then proves the cell enforces them', async () => {
    const cell = fakeCell(() => Promise.reject(FENCE_REFUSAL));
    await expect(fence(cell)).resolves.toBe(4);
    const policy = (name: string) =>
      [...cell.stored.values()].find(
        (object) => object.kind === 'ValidatingAdmissionPolicy' && object.metadata.name === name,
      );
    // The fence exempts the controllers only: the router never writes a fenced copy as itself.
    expect(JSON.stringify(policy(FENCE_POLICY_NAME))).toContain(
      'request.userInfo.username in [\\"cellfed-components\\"]',
    );
    expect(JSON.stringify(policy(MARKS_POLICY_NAME))).toContain(
      '!(request.userInfo.username in [\\"cellfed-components\\", \\"cellfed-router\\"])',
    );
    expect(cell.calls.at(-1)).toMatchObject({ method: 'POST', query: { dryRun: 'All' } });
  });

  it('writes nothing when the cell already holds the same policy, and still probes', async () => {
    const cell = fakeCell(() => Promise.reject(FENCE_REFUSAL));
    await fence(cell);
    const writes = () => cell.calls.filter((call) => call.method === 'PATCH').length;
    await expect(fence(cell)).resolves.toBe(0);
    expect(writes()).toBe(4);
    // Another user name (new credentials for the controller) changes the policies: they are applied again.
    cell.user = 'cellfed-rotated';
    await expect(fence(cell)).resolves.toBe(2);
  });

  it('fails while the cell accepts the probe (the policy is not loaded yet), so nothing moves out of it', async () => {
    const cell = fakeCell(() => Promise.resolve({}));
    await expect(fence(cell)).rejects.toMatchObject({
      code: RebalanceErrorCode.FenceNotInForce,
      message: expect.stringContaining('does not enforce it yet'),
    });
  });

  it('fails, saying why, when the probe is refused for another reason', async () => {
    const cell = fakeCell(() =>
      Promise.reject(new ApiError(403, { reason: 'Forbidden', message: 'cannot create namespaces' }, 'POST')),
    );
    await expect(fence(cell)).rejects.toMatchObject({
      code: RebalanceErrorCode.FenceNotInForce,
      message: expect.stringContaining('cannot create namespaces'),
    });
  });
});
