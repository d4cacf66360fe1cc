// Unit tests (fakes only; the controller's e2e tests run against real cells in e2e/).
import { esmJestConfig } from '../../jest.esm-preset.mjs';

export default esmJestConfig('kubectl-cells');
