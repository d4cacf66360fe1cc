#!/usr/bin/env bash
# Prepares a fresh machine for cellfed: Node.js 24 (fetched once from the npm registry into
# ~/.cache/cellfed when the system Node is older) and the workspace's npm dependencies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node.sh
cellfed_ensure_node
echo "cellfed: using node $(node --version) ($(command -v node)), npm $(npm --version 2>/dev/null)"
echo "cellfed: installing npm dependencies (npm ci)"
npm ci --no-audit --no-fund --loglevel=error
echo "cellfed: set-up done"
