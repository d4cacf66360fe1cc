// One flat config for the whole workspace. The module-boundary rule is what keeps
// @cellfed/hashing and @cellfed/api pure libraries: no Kubernetes client, no I/O.
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
      { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:pure', 'type:lib'] },
      {
        sourceTag: 'type:e2e',
        onlyDependOnLibsWithTags: ['type:pure', 'type:lib', 'type:app', 'type:tool'],
      },
    ],
  },
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/coverage/**', '.nx/**', '**/*.js', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  prettier,
  {
    files: ['**/*.ts', '**/*.mts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(pureBans),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      // noUncheckedIndexedAccess is on; `xs[i]!` after a bounds-checked loop is the intended idiom.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // The Nx rule above sees only npm packages in the project graph; Node built-ins and anything not yet
    // installed slip past it. The pure library's sources import nothing but each other.
    files: ['packages/hashing/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\.{1,2}/)',
              message:
                '@cellfed/hashing is pure: it imports only its own modules (no I/O, no Kubernetes client, no dependencies).',
            },
          ],
        },
      ],
    },
  },
  {
    // The API's sources: the ring (for its limits), zod for the schemas, js-yaml to render the CRDs.
    files: ['packages/api/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!zod$|js-yaml$|@cellfed/hashing$|\\.{1,2}/)',
              message:
                '@cellfed/api is pure: it may import only zod, js-yaml, @cellfed/hashing and its own modules.',
            },
          ],
        },
      ],
    },
  },
  {
    // The shared protocol: constants, descriptors and pure functions over the API's and the ring's types
    // (zod for the held-owner annotation's schema).
    files: ['packages/federation/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!zod$|@cellfed/api$|@cellfed/hashing$|@noble/hashes/[a-z0-9]+\\.js$|\\.{1,2}/)',
              message:
                '@cellfed/federation is pure: it may import only zod, @cellfed/api, @cellfed/hashing, @noble/hashes (the CellBackup names’ SHA-256) and its own modules.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests and benchmarks may spawn processes and touch the file system; the library itself may not.
    files: ['**/*.spec.ts', '**/bench/**/*.{ts,mts}', '**/scripts/**/*.{ts,mts}', '**/test/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries([]),
    },
  },
);
