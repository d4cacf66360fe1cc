/** Fakes for unit tests of code built on controller-kit: time, a list/watch source, a logger. */
export { FakeClock, flushPromises } from './fake-clock.ts';
export { FakeListWatch, goneError } from './fake-list-watch.ts';
export { FakeCell } from './fake-cell.ts';
export { fakeCopies } from './fake-copies.ts';
export { memoryLogger } from './memory-logger.ts';
export { metricValue } from './metric-value.ts';
export { recordingTracer } from './recording-tracer.ts';
export { quotaRefusal } from './quota-refusal.ts';
