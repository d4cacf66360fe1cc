// Unit tests, fakes only (no cells; the integration tests are in e2e/test/controller-kit.e2e.spec.ts).
import { esmJestConfig } from '../../jest.esm-preset.mjs';

export default esmJestConfig('controller-kit');
