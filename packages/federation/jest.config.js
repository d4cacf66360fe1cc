// Unit tests of the shared protocol's constants and codecs, with no cluster.
import { esmJestConfig } from '../../jest.esm-preset.mjs';

export default esmJestConfig('federation');
