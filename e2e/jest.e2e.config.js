// The e2e suite against real cells: the packages' ESM set-up, plus a global setup that brings the
// environment up once per run (or uses CELLFED_E2E_ENV) and a teardown that takes it down; tests read
// env.json. See README "End-to-end tests".
import { esmJestConfig } from '../jest.esm-preset.mjs';

const unit = esmJestConfig('e2e');

/** @type {import('jest').Config} */
export default {
  ...unit,
  displayName: 'e2e',
  testMatch: ['<rootDir>/test/**/*.e2e.spec.ts'],
  // The chart's pods in kind: their own run (jest.kind.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/in-cluster/'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // Suites share one environment and fault tests stop its processes: one at a time.
  maxWorkers: 1,
  testTimeout: 120_000,
};
