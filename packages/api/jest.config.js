// Unit tests of the schemas, the CRDs and the names, with no cluster.
import { esmJestConfig } from '../../jest.esm-preset.mjs';

export default esmJestConfig('api');
