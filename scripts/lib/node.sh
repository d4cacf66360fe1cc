# Sourced by the project's scripts: puts Node.js 24 (the version in .nvmrc) first on PATH.
# The system Node is used when it is already new enough; otherwise the official binary that the npm
# package node-linux-<arch> carries is unpacked once into a cache outside the repo and reused.
# shellcheck shell=bash

cellfed_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cellfed_cache="${CELLFED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cellfed}"
cellfed_node_version="$(tr -d ' \n\r' <"$cellfed_root/.nvmrc")"
cellfed_node_major="${cellfed_node_version%%.*}"

cellfed_system_node_major() {
  command -v node >/dev/null 2>&1 || { echo 0; return; }
  node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

cellfed_ensure_node() {
  if [ "$(cellfed_system_node_major)" -ge "$cellfed_node_major" ]; then
    return 0
  fi
  local arch
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "cellfed: no Node.js ${cellfed_node_major} package for $(uname -m); install Node.js ${cellfed_node_major} yourself" >&2; return 1 ;;
  esac
  local dir="$cellfed_cache/node/v$cellfed_node_version-linux-$arch"
  if [ ! -x "$dir/bin/node" ]; then
    command -v npm >/dev/null 2>&1 || { echo "cellfed: npm is needed to fetch Node.js $cellfed_node_version" >&2; return 1; }
    echo "cellfed: system Node.js is older than $cellfed_node_major; fetching node-linux-$arch@$cellfed_node_version from the npm registry (once)" >&2
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "node-linux-$arch@$cellfed_node_version" >/dev/null) || { rm -rf "$tmp"; echo "cellfed: could not fetch node-linux-$arch@$cellfed_node_version" >&2; return 1; }
    mkdir -p "$tmp/unpacked"
    tar -xzf "$tmp"/node-linux-*.tgz -C "$tmp/unpacked" package/bin/node
    mkdir -p "$dir/bin"
    mv "$tmp/unpacked/package/bin/node" "$dir/bin/node.partial"
    mv "$dir/bin/node.partial" "$dir/bin/node"
    rm -rf "$tmp"
  fi
  export PATH="$dir/bin:$PATH"
  hash -r
}
