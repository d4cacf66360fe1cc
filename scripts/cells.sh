#!/usr/bin/env bash
# `npm run cells -- up|down|status|run [options]`: builds the Kubernetes tools if the cache is cold, builds
# @cellfed/hashing, then runs the cells CLI (e2e/src/cli/cells.ts) on Node 24 with the tools' directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node.sh
cellfed_ensure_node
export NX_NO_CLOUD=true NX_DAEMON=false NX_TUI=false
case "${1:-}" in
  up | run | "") CELLFED_TOOLS_BIN="${CELLFED_TOOLS_BIN:-$(bash scripts/build-tools.sh)}" ;;
  *) CELLFED_TOOLS_BIN="${CELLFED_TOOLS_BIN:-}" ;;
esac
export CELLFED_TOOLS_BIN
npx nx run hashing:build --outputStyle=static >/dev/null || npx nx run hashing:build --outputStyle=static
exec node e2e/src/cli/cells.ts "$@"
