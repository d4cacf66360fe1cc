import { humanDuration } from './human-duration.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('humanDuration (as kube-apiserver prints Age)', () => {
  it.each([
    [-5 * S, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [59 * S, '59s'],
    [119 * S + 999, '119s'],
    [2 * M, '2m'],
    [7 * M + 12 * S, '7m12s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [5 * H + 4 * M, '5h4m'],
    [8 * H + 59 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [3 * D + 6 * H, '3d6h'],
    [8 * D, '8d'],
    [729 * D, '729d'],
    [2 * 365 * D, '2y'],
    [2 * 365 * D + 10 * D, '2y10d'],
    [9 * 365 * D + 100 * D, '9y'],
  ])('%d ms is %s', (milliseconds, printed) => {
    expect(humanDuration(milliseconds)).toBe(printed);
  });
});
