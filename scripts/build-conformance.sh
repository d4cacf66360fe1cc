#!/usr/bin/env bash
# Builds Kubernetes' own e2e specs (e2e/tools/conformance: the API's sig-api-machinery, sig-apps and
# sig-network specs as one e2e.test) and ginkgo, at the Kubernetes release the cells run, from the Go
# module proxy into a cache outside the repo, and prints the bin directory on stdout. A warm cache returns
# at once; a cold build takes several minutes on 2 cores (it shares Go's build cache with build-tools.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/tools.sh"

dir="$(cellfed_conformance_dir)"
bin="$dir/bin"
log() { echo "build-conformance: $*" >&2; }

cellfed_cache_lock conformance

if [ -x "$bin/e2e.test" ] && [ -x "$bin/ginkgo" ] && [ -f "$dir/build.json" ]; then
  log "cache warm: $bin"
  echo "$bin"
  exit 0
fi

started=$SECONDS
staging="$(mktemp -d "$cellfed_cache/conformance/.build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
log "cache cold: building e2e.test and ginkgo into $dir with $("$cellfed_go" env GOVERSION) (a cold build takes about 10 minutes on 2 cores)"
(
  cd "$cellfed_root/e2e/tools/conformance"
  export GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0
  "$cellfed_go" test -c -trimpath -ldflags="$(cellfed_kube_ldflags)" -o "$staging/bin/e2e.test" .
  "$cellfed_go" build -trimpath -ldflags='-s -w' -o "$staging/bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo
) >&2 || { log "go build failed"; exit 1; }
cat >"$staging/build.json" <<JSON
{
  "goVersion": "$("$cellfed_go" env GOVERSION)",
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "totalSeconds": $((SECONDS - started))
}
JSON
cellfed_cache_install "$staging" "$dir"
log "built in $((SECONDS - started)) s: $bin"
echo "$bin"
