# Sourced by the project's scripts that run kind: kind on PATH and the node image to make clusters from.
# Where kind is installed (a laptop, registries reachable) it is used with its own node image; where it is
# not (a machine that reaches no container registry, like CI's), both are built here once and cached
# (scripts/kind-node-image.sh). Sets cellfed_kind_node_image: empty for kind's own.
# shellcheck shell=bash

cellfed_kind_ready() {
  local scripts
  scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cellfed_kind_node_image=
  if ! command -v kind >/dev/null 2>&1; then
    PATH="$(dirname "$(bash "$scripts/kind-node-image.sh" --kind)"):$PATH"
    export PATH
    cellfed_kind_node_image="$(bash "$scripts/kind-node-image.sh")"
  fi
}
