import { ApiError, ControllerKitError, ControllerKitErrorCode } from '@cellfed/controller-kit';

import { isTransient, patientRead } from './transient.ts';

const transport = () =>
  new ControllerKitError(
    ControllerKitErrorCode.Transport,
    'GET https://router/apis/cells.cellfed.io/v1alpha1/cellsets/default: Client network socket disconnected',
  );
const answered = (code: number) => new ApiError(code, { reason: 'x', message: 'm' }, 'GET /x');

describe('isTransient', () => {
  it('retries a failed connection and a busy or unavailable server', () => {
    expect(isTransient(transport())).toBe(true);
    for (const code of [429, 500, 502, 503, 504]) expect(isTransient(answered(code))).toBe(true);
  });

  it('takes a refusal, a missing object or an error of its own as final', () => {
    for (const code of [400, 401, 403, 404, 409, 422]) expect(isTransient(answered(code))).toBe(false);
    expect(isTransient(new ControllerKitError(ControllerKitErrorCode.ApiError, 'x'))).toBe(false);
    expect(isTransient(new Error('bug'))).toBe(false);
  });
});

describe('patientRead', () => {
  it('asks again after a transient failure, telling each, and returns the answer', async () => {
    const failures = [transport(), answered(503)];
    const lines: string[] = [];
    const waits: number[] = [];
    let reads = 0;
    const read = async () => {
      reads++;
      const failure = failures.shift();
      if (failure) throw failure;
      return 'cellset';
    };
    const answer = await patientRead(read, {
      overdue: () => undefined,
      report: (line) => lines.push(line),
      sleep: async (ms) => waits.push(ms),
    });
    expect(answer).toBe('cellset');
    expect(reads).toBe(3);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/socket disconnected; asking again$/);
    expect(lines[1]).toMatch(/503/);
    expect(waits).toEqual([1000, 1000]);
  });

  it('throws a final failure at once', async () => {
    let reads = 0;
    const read = async () => {
      reads++;
      throw answered(403);
    };
    await expect(
      patientRead(read, { overdue: () => undefined, report: () => undefined, sleep: async () => undefined }),
    ).rejects.toThrow(/403/);
    expect(reads).toBe(1);
  });

  it('stops with the deadline’s error once the wait is overdue', async () => {
    let reads = 0;
    const read = async () => {
      reads++;
      throw transport();
    };
    let now = 0;
    await expect(
      patientRead(read, {
        overdue: () => {
          if (now >= 3) throw new Error('not done after 3 s');
        },
        report: () => undefined,
        sleep: async () => (now += 1),
      }),
    ).rejects.toThrow('not done after 3 s');
    expect(reads).toBe(4);
  });
});
