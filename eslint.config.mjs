// One flat config for the whole workspace. The module-boundary rule is what keeps
// @cellfed/hashing a pure library: no Kubernetes client, no I/O, nothing but zod.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const pureBans = [
  '@kubernetes/*',
  'undici',
  'pino',
  'prom-client',
  'node:*',
  'fs',
  'net',
  'http',
  'https',
  'http2',
  'child_process',
  'dgram',
  'dns',
  'tls',
];

const boundaries = (pureExtraBans) => [
  'error',
  {
    enforceBuildableLibDependency: true,
    allow: [],
    depConstraints: [
      {
        sourceTag: 'type:pure',
        onlyDependOnLibsWithTags: ['type:pure'],
        bannedExternalImports: pureExtraBans,
      },
      { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:pure', 'type:lib'] },
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:pure', 'type:lib'] },
      { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:pure', 'type:lib', 'type:app'] },
    ],
  },
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/coverage/**', '.nx/**', '**/*.js', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  prettier,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(pureBans),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Tests and benchmarks may spawn processes and touch the file system; the library itself may not.
    files: ['**/*.spec.ts', '**/bench/**/*.ts', '**/test/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries([]),
    },
  },
);
