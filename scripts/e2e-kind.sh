#!/usr/bin/env bash
# `nx run e2e:e2e-kind`: the e2e suites of the chart's own pods (e2e/test/in-cluster). The global setup makes a
# kind control plane with the chart installed (`helm install --wait`) and kind cells; this script first
# provides what that needs: kind and its node image (scripts/lib/kind.sh), and the router's and
# controllers' images (scripts/kind-images.sh). Without a Docker engine every suite is reported skipped,
# with the reason (scripts/machine-setup.sh sets one up).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node.sh
source scripts/lib/kind.sh
cellfed_ensure_node

# helm and kubectl (the chart's install, the tests) from the cached tools build.
CELLFED_TOOLS_BIN="${CELLFED_TOOLS_BIN:-$(bash scripts/build-tools.sh)}"
export CELLFED_TOOLS_BIN
export CELLFED_E2E_PROVIDER=kind
export CELLFED_E2E_CELLS="${CELLFED_E2E_CELLS:-2}"
export CELLFED_E2E_DIR="${CELLFED_E2E_DIR:-$PWD/tmp/e2e-kind}"
if docker info >/dev/null 2>&1; then
  cellfed_kind_ready
  if [ -n "$cellfed_kind_node_image" ]; then
    export CELLFED_E2E_NODE_IMAGE="${CELLFED_E2E_NODE_IMAGE:-$cellfed_kind_node_image}"
  fi
  if [ -z "${CELLFED_E2E_IMAGES:-}" ]; then
    CELLFED_E2E_IMAGES="$(bash scripts/kind-images.sh | paste -sd, -)"
    export CELLFED_E2E_IMAGES
  fi
fi
mkdir -p tmp/test-results
cd e2e
exec node --experimental-vm-modules --no-warnings=ExperimentalWarning ../node_modules/jest/bin/jest.js \
  -c jest.kind.config.js --json --outputFile=../tmp/test-results/e2e-kind.json "$@"
