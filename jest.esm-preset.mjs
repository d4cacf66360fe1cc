// Jest settings for the ESM packages (e2e, controller-kit): @kubernetes/client-node is ESM-only, so jest
// runs with --experimental-vm-modules, ts-jest emits ES modules, and sources import each other with .ts
// extensions. Each package's jest.config.js names itself and may add to this.
/** @returns {import('jest').Config} */
export function esmJestConfig(displayName) {
  return {
    displayName,
    testEnvironment: 'node',
    testMatch: ['<rootDir>/src/**/*.spec.ts'],
    extensionsToTreatAsEsm: ['.ts'],
    moduleFileExtensions: ['ts', 'js', 'json'],
    transform: {
      '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.spec.json' }],
    },
    clearMocks: true,
  };
}
