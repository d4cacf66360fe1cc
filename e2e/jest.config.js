// The e2e helpers' own unit specs (no cells): `nx run e2e:test`, with every package's unit tests.
import { esmJestConfig } from '../jest.esm-preset.mjs';

/** @type {import('jest').Config} */
export default {
  ...esmJestConfig('e2e-helpers'),
  testMatch: ['<rootDir>/test/helpers/**/*.spec.ts'],
};
