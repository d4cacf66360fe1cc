// Unit tests of the cells tooling (no cells).
import { esmJestConfig } from '../../jest.esm-preset.mjs';

export default esmJestConfig('cells');
