#!/usr/bin/env bash
# `npm run cells -- up|down|status|run|add-cell|remove-cell|kill-cell [options]`: builds the Kubernetes tools
# if the cache is cold, builds @cellfed/hashing (and for `run` the kubectl cells plugin), then runs the cells
# CLI (tools/cells/src/cli/cells.ts) on Node 24 with the tools' directory. With `--provider kind` it also
# builds what kind needs where no registry answers (scripts/kind-node-image.sh, scripts/kind-images.sh).
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

# `up --provider kind` on a machine without kind (one that reaches no container registry, like CI's): kind
# and its node image built here, and the project's images for the chart, unless given.
extra=()
if [[ "${1:-}" == up ]] && [[ " $* " == *" --provider kind "* || " $* " == *" --provider=kind "* ]]; then
  source scripts/lib/kind.sh
  cellfed_kind_ready
  if [ -n "$cellfed_kind_node_image" ] && [[ " $* " != *" --node-image"* ]]; then
    extra+=(--node-image "$cellfed_kind_node_image")
  fi
  if [[ " $* " != *" --image"* ]]; then
    while IFS= read -r image; do extra+=(--image "$image"); done < <(bash scripts/kind-images.sh)
  fi
fi
npx nx run hashing:build --outputStyle=static >/dev/null || npx nx run hashing:build --outputStyle=static
if [[ "${1:-run}" == run ]]; then
  npx nx run kubectl-cells:build --outputStyle=static >/dev/null || npx nx run kubectl-cells:build --outputStyle=static
fi
exec node tools/cells/src/cli/cells.ts "$@" "${extra[@]}"
