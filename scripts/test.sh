#!/usr/bin/env bash
# The test command (README, CI): lint and test every project through Nx, then one summary line.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node.sh
cellfed_ensure_node
# Nothing phones home: no Nx Cloud, no daemon, no interactive terminal UI.
export NX_NO_CLOUD=true NX_DAEMON=false NX_TUI=false
# CI proves everything afresh: no task result is replayed from Nx's cache.
if [ "${CI:-}" = true ]; then export NX_SKIP_NX_CACHE=true; fi
rm -rf tmp/test-results && mkdir -p tmp/test-results
status=0
npx prettier --check . --log-level=warn || status=$?
npx nx run-many -t lint test --outputStyle=static "$@" || status=$?
node scripts/test-summary.mjs tmp/test-results || status=$?
exit "$status"
