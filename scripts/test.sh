#!/usr/bin/env bash
# The test command (README, CI): build the Kubernetes tools (cached outside the repo), lint and unit-test
# every project through Nx, run the e2e suite against real cells, then the chart's suites on kind, then
# print one summary line.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node.sh
cellfed_ensure_node
# Nothing phones home: no Nx Cloud, no daemon, no interactive terminal UI.
export NX_NO_CLOUD=true NX_DAEMON=false NX_TUI=false
# CI proves everything afresh: no task result is replayed from Nx's cache.
if [ "${CI:-}" = true ]; then export NX_SKIP_NX_CACHE=true; fi
rm -rf tmp/test-results && mkdir -p tmp/test-results

# etcd, kube-apiserver, kube-controller-manager, kubectl and helm from the Go module proxy: minutes when
# the cache is cold, instant when warm. The e2e suite finds them through CELLFED_TOOLS_BIN.
CELLFED_TOOLS_BIN="$(bash scripts/build-tools.sh)"
export CELLFED_TOOLS_BIN
# Kubernetes' own e2e specs of the API (e2e.test and ginkgo) for the conformance suite, cached the same way.
CELLFED_CONFORMANCE_BIN="$(bash scripts/build-conformance.sh)"
export CELLFED_CONFORMANCE_BIN
# Whatever happens to the suites, no cell process or kind cluster outlives this script.
export CELLFED_E2E_DIR="$PWD/tmp/e2e"
trap 'for dir in "$CELLFED_E2E_DIR" "$PWD/tmp/e2e-kind"; do
  node tools/cells/src/cli/cells.ts down --dir "$dir" --log-level warn || true
done' EXIT

status=0
npx prettier --check . --log-level=warn || status=$?
npm run --silent lint:deps || status=$?
npm run --silent lint:unused || status=$?
npx nx run-many -t lint test --outputStyle=static "$@" || status=$?
npx nx run e2e:e2e --outputStyle=static || status=$?
# The chart's own pods in kind (skipped, with the reason, where no Docker engine answers).
CELLFED_E2E_DIR="$PWD/tmp/e2e-kind" npx nx run e2e:e2e-kind --outputStyle=static || status=$?
node scripts/test-summary.mjs tmp/test-results || status=$?
exit "$status"
