// The e2e suites of the chart's own router and controllers, running in a kind control plane with kind
// cells (`nx run e2e:e2e-kind`, through scripts/e2e-kind.sh, which builds the images kind runs).
import config from './jest.e2e.config.js';

/** @type {import('jest').Config} */
export default {
  ...config,
  displayName: 'e2e-kind',
  testMatch: ['<rootDir>/test/in-cluster/**/*.e2e.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300_000,
};
