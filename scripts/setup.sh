#!/usr/bin/env bash
# Prepares a fresh machine for cellfed: Node.js 24 (fetched once from the npm registry into
# ~/.cache/cellfed when the system Node is older) and the workspace's npm dependencies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node.sh
cellfed_ensure_node
echo "cellfed: using node $(node --version) ($(command -v node)), npm $(npm --version 2>/dev/null)"
echo "cellfed: installing npm dependencies (the versions in package-lock.json)"
# Not `npm ci`: npm leaves other platforms' optional native packages (nx, unrs-resolver) out of the lock file
# (npm/cli#4828), and `npm ci` then refuses the lock as out of sync. `npm install --no-save` installs the
# locked versions and never rewrites the lock file.
npm install --no-save --no-audit --no-fund --loglevel=error
echo "cellfed: set-up done"
