// The e2e suite against real cells: the global setup brings the environment up once per run (or uses
// CELLFED_E2E_ENV), the teardown takes it down; tests read env.json. See README "End-to-end tests".
/** @type {import('jest').Config} */
export default {
  displayName: 'e2e',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.e2e.spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // Suites share one environment and fault tests stop its processes: one at a time.
  maxWorkers: 1,
  testTimeout: 120_000,
};
