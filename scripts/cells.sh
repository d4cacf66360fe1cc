#!/usr/bin/env bash
# `npm run cells -- up|down|status|run|add-cell|remove-cell|kill-cell [options]`: builds the Kubernetes tools
# if the cache is cold, builds @cellfed/hashing (and for `run` the kubectl cells plugin), then runs the cells
# CLI (tools/cells/src/cli/cells.ts) on Node 24 with the tools' directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node.sh
cellfed_ensure_node
export NX_NO_CLOUD=true NX_DAEMON=false NX_TUI=false
case "${1:-}" in
  up | run | add-cell | "") CELLFED_TOOLS_BIN="${CELLFED_TOOLS_BIN:-$(bash scripts/build-tools.sh)}" ;;
  *) CELLFED_TOOLS_BIN="${CELLFED_TOOLS_BIN:-}" ;;
esac
export CELLFED_TOOLS_BIN
npx nx run hashing:build --outputStyle=static >/dev/null || npx nx run hashing:build --outputStyle=static
if [[ "${1:-run}" == run ]]; then
  npx nx run kubectl-cells:build --outputStyle=static >/dev/null || npx nx run kubectl-cells:build --outputStyle=static
fi
exec node tools/cells/src/cli/cells.ts "$@"
