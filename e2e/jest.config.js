// Unit tests of the harness (no cells).
import { esmJestConfig } from '../jest.esm-preset.mjs';

export default esmJestConfig('e2e-unit');
