#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kubectl, helm, the suite's client-go informer
# program and the router benchmark's Go proxy from the Go module proxy into
# a cache outside the repo (scripts/lib/tools.sh gives the key) and prints the bin directory on stdout.
# A warm cache returns at once; a cold build takes many minutes on 2 cores and says so as it goes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/tools.sh"

dir="$(cellfed_tools_dir)"
bin="$dir/bin"

all_present() {
  local name
  for name in "${cellfed_kube_tool_names[@]}" "${cellfed_helm_tool_names[@]}"; do
    [ -x "$bin/$name" ] || return 1
  done
  [ -f "$dir/build.json" ]
}

log() { echo "build-tools: $*" >&2; }

# Counts the packages `go build -v` reports so a cold build shows it is moving.
progress() {
  local label="$1" count=0 start=$SECONDS
  while IFS= read -r line; do
    case "$line" in
      *" "* | "") echo "$line" >&2 ;; # compiler output, not a package name
      *)
        count=$((count + 1))
        if [ $((count % 200)) -eq 0 ]; then log "$label: $count packages compiled, $((SECONDS - start)) s"; fi
        ;;
    esac
  done
  log "$label: $count packages compiled in $((SECONDS - start)) s"
}

# module dir, label, tool names, link flags, packages...: one `go build` for all of a module's tools shares
# their compilation.
build_module() {
  local module_dir="$1" label="$2" names="$3" ldflags="$4"
  shift 4
  log "$label: building $names (a cold build takes about 7 minutes on 2 cores; warm builds reuse Go's cache)"
  (
    cd "$module_dir"
    GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 /usr/bin/time -f '%e %M' -o "$staging/$label.time" \
      "$cellfed_go" build -v -trimpath -ldflags="$ldflags" -o "$staging/bin/" "$@" 2>&1
  ) | progress "$label"
  local status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] || { log "$label: go build failed (exit $status)"; exit "$status"; }
}

cellfed_cache_lock tools

if all_present; then
  log "cache warm: $bin"
  echo "$bin"
  exit 0
fi

started=$SECONDS
staging="$(mktemp -d "$cellfed_cache/tools/.build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/bin"
log "cache cold: building into $dir with $("$cellfed_go" env GOVERSION)"
build_module "$cellfed_root/e2e/tools" kubernetes "${cellfed_kube_tool_names[*]}" "$(cellfed_kube_ldflags)" \
  "${cellfed_kube_tools[@]}"
build_module "$cellfed_root/e2e/tools/helm" helm "${cellfed_helm_tool_names[*]}" '-s -w' "${cellfed_helm_tools[@]}"

# go build names a binary after its path's last element other than a major version: etcd's is "server".
mv "$staging/bin/server" "$staging/bin/etcd"

read -r k8s_s k8s_kb <"$staging/kubernetes.time"
read -r helm_s helm_kb <"$staging/helm.time"
cat >"$staging/build.json" <<JSON
{
  "goVersion": "$("$cellfed_go" env GOVERSION)",
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "totalSeconds": $((SECONDS - started)),
  "kubernetes": { "seconds": $k8s_s, "largestProcessPeakRssKiB": $k8s_kb },
  "helm": { "seconds": $helm_s, "largestProcessPeakRssKiB": $helm_kb }
}
JSON
cellfed_cache_install "$staging" "$dir"
log "built in $((SECONDS - started)) s: $bin"
echo "$bin"
