# Sourced by the project's scripts: where the Kubernetes tools built from e2e/tools live.
# The cache directory is keyed by everything that decides the binaries: both go.mod/go.sum pairs, the
# suite's own Go sources, the Go version, the target platform and the link flags, so a dependency bump or
# a new Go builds afresh.
# shellcheck shell=bash

cellfed_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cellfed_cache="${CELLFED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cellfed}"
cellfed_go="${CELLFED_GO:-/usr/local/go/bin/go}"
# The tools each module builds; e2e code finds them by these names in CELLFED_TOOLS_BIN.
# cellfed.io/e2e/tools/informer is the suite's own client-go program (a controller's informer, through the
# router and against one apiserver); cellfed.io/e2e/tools/bench-proxy the router benchmark's Go floor (a
# standard-library reverse proxy in front of a cell).
cellfed_kube_tools=(go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver
  k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl cellfed.io/e2e/tools/informer
  cellfed.io/e2e/tools/bench-proxy)
cellfed_kube_tool_names=(etcd kube-apiserver kube-controller-manager kubectl informer bench-proxy)
cellfed_helm_tools=(helm.sh/helm/v4/cmd/helm)
cellfed_helm_tool_names=(helm)

# The version the Kubernetes binaries report (/version, `kubectl version`, Helm's kubeVersion checks): the
# k8s.io/kubernetes version e2e/tools/go.mod requires. A module build leaves it v0.0.0-master otherwise.
cellfed_kube_ldflags() {
  local version major minor
  version="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$cellfed_root/e2e/tools/go.mod")"
  [ -n "$version" ] || { echo "cellfed: no k8s.io/kubernetes in e2e/tools/go.mod" >&2; return 1; }
  major="${version#v}" && major="${major%%.*}"
  minor="$(echo "$version" | cut -d. -f2)"
  local pkg=k8s.io/component-base/version
  echo "-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
}

# A cache directory of KIND (`tools`, `conformance`) named by a hash of what decides its binaries: the Go
# version and platform, what KEY_INPUTS prints, and the link flags.
cellfed_keyed_dir() {
  local kind="$1" key_inputs="$2" key
  [ -x "$cellfed_go" ] || { echo "cellfed: Go not found at $cellfed_go (set CELLFED_GO)" >&2; return 1; }
  key="$({
    "$cellfed_go" env GOVERSION GOOS GOARCH
    "$key_inputs"
    cellfed_kube_ldflags
  } | sha256sum | cut -c1-16)" || return 1
  echo "$cellfed_cache/$kind/$key"
}

cellfed_tools_key_inputs() {
  cat "$cellfed_root/e2e/tools/go.mod" "$cellfed_root/e2e/tools/go.sum" \
    "$cellfed_root/e2e/tools/helm/go.mod" "$cellfed_root/e2e/tools/helm/go.sum" \
    "$cellfed_root"/e2e/tools/informer/*.go "$cellfed_root"/e2e/tools/bench-proxy/*.go
  printf '%s\n' "${cellfed_kube_tools[@]}" "${cellfed_helm_tools[@]}"
}

cellfed_tools_dir() { cellfed_keyed_dir tools cellfed_tools_key_inputs; }

# Kubernetes' own e2e specs for the conformance suite (scripts/build-conformance.sh): keyed by their module
# and its Go sources, apart from the cells' tools so neither rebuilds the other.
cellfed_conformance_key_inputs() {
  cat "$cellfed_root/e2e/tools/conformance/go.mod" "$cellfed_root/e2e/tools/conformance/go.sum" \
    "$cellfed_root"/e2e/tools/conformance/*.go
}

cellfed_conformance_dir() { cellfed_keyed_dir conformance cellfed_conformance_key_inputs; }

# Takes the lock of KIND's cache: one build at a time; a second caller waits, then finds the cache warm.
cellfed_cache_lock() {
  mkdir -p "$cellfed_cache/$1"
  exec 9>"$cellfed_cache/$1/.lock"
  flock 9
}

# Puts a finished build (STAGING, made under KIND's cache) in place as DIR, and drops the caller's EXIT trap
# that would have removed it.
cellfed_cache_install() {
  rm -rf "$2"
  mv "$1" "$2"
  trap - EXIT
}
