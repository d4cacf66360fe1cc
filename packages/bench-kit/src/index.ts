/** @cellfed/bench-kit — what cellfed's benchmarks share (benchmarks only; nothing at run time uses it). */
export { BenchEnv, ROOT, median, percentile, progress, round, writeResult } from './bench-env.ts';
export type { EnvFile, Pinning } from './bench-env.ts';
export { call, forEachIndex, send } from './api-calls.ts';
export type { Answer, Target } from './api-calls.ts';
export { PINNING, canPin, cpuMicros, pinToCpu } from './cpu-pinning.ts';
export { reportedMemoryMb, residentMb } from './process-memory.ts';
