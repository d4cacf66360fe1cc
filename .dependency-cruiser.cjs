// The layering the packages keep, checked in CI (`npm run lint:deps`, part of scripts/test.sh) on top of
// eslint's Nx module boundaries (which packages may import which) and the purity rules in eslint.config.mjs.
// What this adds: no import cycle inside a package, and no package importing an app.
const APPS = '(cell-router|rebalance-controller|backup-controller|kubectl-cells)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment:
        'Two modules that import each other (even type-only) are one concern split in two: move the shared ' +
        'type to the module both can import, or let the lower one declare the interface it needs.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'apps-export-nothing',
      severity: 'error',
      comment:
        'The router, the controllers and kubectl-cells are apps: nothing imports them but their own modules ' +
        '(the e2e suite runs them as processes; what two apps share belongs in a library).',
      from: { pathNot: [`^packages/${APPS}/`] },
      to: { path: `^packages/${APPS}/` },
    },
    {
      name: 'libraries-below-apps',
      severity: 'error',
      comment: 'hashing, api, federation and controller-kit are libraries: they import no app, tool or test.',
      from: { path: '^packages/(hashing|api|federation|controller-kit)/' },
      to: { path: ['^tools/', '^e2e/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)node_modules/', '(^|/)dist/', '\\.d\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'default'],
      extensions: ['.ts', '.mts', '.js', '.mjs'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
