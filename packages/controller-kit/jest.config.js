// Unit tests, fakes only (no cells). ESM, because @kubernetes/client-node is ESM-only: jest runs with
// --experimental-vm-modules and ts-jest emits ES modules; sources import each other with .ts extensions.
/** @type {import('jest').Config} */
export default {
  displayName: 'controller-kit',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  clearMocks: true,
};
