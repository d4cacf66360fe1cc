#!/usr/bin/env bash
# Builds kind's node image on a machine that reaches no container registry, and prints its name on stdout.
# Everything comes from the Go module proxy and Debian's packages (kind's own `kind build node-image` pulls
# images and clones sources):
#   1. binaries: kubelet, kubeadm, kube-scheduler and kube-proxy from e2e/tools (the Kubernetes release the
#      local cells run; kube-apiserver, kube-controller-manager, kubectl and etcd come from
#      scripts/build-tools.sh); containerd, crictl, the CNI plugins, CoreDNS and kind at the versions below;
#      pause from Kubernetes' own C source (needs gcc);
#   2. the node's root filesystem: Debian with kind's base packages (debootstrap);
#   3. the images kubeadm asks for, under the names it asks for: each one binary on an empty base (kube-proxy
#      on the node's Debian, for iptables);
#   4. the node image (images/kind-node/Dockerfile), with those images imported into its containerd.
# Cached by a key of everything that decides the image: a warm cache answers at once. Needs a Docker engine
# (scripts/machine-setup.sh). Progress on stderr; a cold build takes about 15 minutes on 2 cores.
# `--kind` prints the path of the kind binary built with it instead (the image is built all the same).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/tools.sh

containerd_version=v2.4.2
cni_plugins_version=v1.10.0
cri_tools_version=v1.37.0
coredns_version=v1.14.6 # what kubeadm of this Kubernetes release deploys (checked below)
kind_version=v0.33.0
suite=bookworm
# kind's base packages (its images/base/Dockerfile), less iSCSI and NFS, plus runc (kind builds its own).
packages=systemd,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz
packages+=,fuse-overlayfs,e2fsprogs,bash,ca-certificates,curl,jq,procps,runc,socat
mirror="${CELLFED_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

log() { printf 'kind-node-image: %s\n' "$*" >&2; }
fail() {
  log "$*"
  exit 1
}

kubernetes_version="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' e2e/tools/go.mod)"
key="$(
  {
    "$cellfed_go" env GOVERSION GOOS GOARCH
    cat e2e/tools/go.mod e2e/tools/go.sum "$0"
    find images/kind-node -type f | sort | xargs cat
  } | sha256sum | cut -c1-16
)"
image="cellfed-local/kind-node:$kubernetes_version-$key"
dir="$cellfed_cache/kind-node/$key"

docker info >/dev/null 2>&1 || fail "no Docker engine answers; set one up with: sudo bash scripts/machine-setup.sh"
mkdir -p "$cellfed_cache/kind-node"
exec 9>"$cellfed_cache/kind-node/.lock"
flock 9 # one build at a time; a second caller waits and then finds the image

answer() { if [ "${1:-}" = --kind ]; then echo "$dir/bin/kind"; else echo "$image"; fi; }
if docker image inspect "$image" >/dev/null 2>&1 && [ -x "$dir/bin/kind" ]; then
  log "cache warm: $image"
  answer "$@"
  exit 0
fi
command -v gcc >/dev/null || fail "gcc is missing (pause is built from Kubernetes' C source): apt-get install gcc libc6-dev"
command -v debootstrap >/dev/null || fail "debootstrap is missing: sudo bash scripts/machine-setup.sh installs it"

started=$SECONDS
mkdir -p "$dir/bin" "$dir/images"
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
step() { log "[$1/4] $2 ($((SECONDS - started)) s so far)"; }

# 1. Binaries.
step 1 "binaries for Kubernetes $kubernetes_version (a cold build takes about 10 minutes)"
tools_bin="$(bash scripts/build-tools.sh)"
if [ ! -x "$dir/bin/kubelet" ]; then
  log "kubelet, kubeadm, kube-scheduler, kube-proxy from e2e/tools"
  (cd e2e/tools && GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 "$cellfed_go" build -trimpath \
    -ldflags="$(cellfed_kube_ldflags)" -o "$dir/bin/" k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy)
fi
go_install() { # label, bin directory, go install arguments...
  local label="$1" into="$2"
  shift 2
  log "$label"
  (cd "$context" && GOWORK=off GOFLAGS=-trimpath CGO_ENABLED=0 GOBIN="$into" "$cellfed_go" install "$@")
}
[ -x "$dir/bin/containerd" ] ||
  go_install "containerd $containerd_version" "$dir/bin" -tags "no_aufs no_zfs no_btrfs no_devmapper" \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd_version" \
    "github.com/containerd/containerd/v2/cmd/containerd@$containerd_version" \
    "github.com/containerd/containerd/v2/cmd/ctr@$containerd_version" \
    "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$containerd_version"
mkdir -p "$dir/cni"
[ -x "$dir/cni/portmap" ] ||
  go_install "CNI plugins $cni_plugins_version" "$dir/cni" -ldflags "-s -w" \
    "github.com/containernetworking/plugins/plugins/ipam/host-local@$cni_plugins_version" \
    "github.com/containernetworking/plugins/plugins/main/loopback@$cni_plugins_version" \
    "github.com/containernetworking/plugins/plugins/main/ptp@$cni_plugins_version" \
    "github.com/containernetworking/plugins/plugins/meta/portmap@$cni_plugins_version"
[ -x "$dir/bin/crictl" ] ||
  go_install "crictl $cri_tools_version" "$dir/bin" -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$cri_tools_version" \
    "sigs.k8s.io/cri-tools/cmd/crictl@$cri_tools_version"
[ -x "$dir/bin/coredns" ] || go_install "CoreDNS $coredns_version" "$dir/bin" -ldflags "-s -w" \
  "github.com/coredns/coredns@$coredns_version"
[ -x "$dir/bin/kind" ] || go_install "kind $kind_version" "$dir/bin" -ldflags "-s -w" "sigs.k8s.io/kind@$kind_version"
k8s_source="$(cd e2e/tools && GOWORK=off "$cellfed_go" list -m -f '{{.Dir}}' k8s.io/kubernetes)"
pause_version="$(awk -F'"' '/PauseVersion = / { print $2 }' "$k8s_source/cmd/kubeadm/app/constants/constants.go")"
[ -x "$dir/bin/pause" ] ||
  gcc -Os -static -Wall -Werror -DVERSION="v$pause_version" -o "$dir/bin/pause" "$k8s_source/build/pause/linux/pause.c"
kind_source="$(cd "$context" && GOFLAGS=-mod=mod "$cellfed_go" mod download -json "sigs.k8s.io/kind@$kind_version" |
  jq -r .Dir)"
[ -d "$kind_source/images/base/files" ] || fail "kind $kind_version's source has no images/base/files"

# 2. The node's root filesystem.
step 2 "Debian $suite with kind's base packages"
base="cellfed-local/kind-node-base:$suite-$(echo "$packages" | sha256sum | cut -c1-8)"
if ! docker image inspect "$base" >/dev/null 2>&1; then
  rootfs="$context/rootfs"
  log "debootstrap $suite from $mirror: about 3 minutes"
  debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
    fail "debootstrap failed; see $dir/debootstrap.log"
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
  tar -C "$rootfs" -c . | docker import - "$base" >/dev/null
  rm -rf "$rootfs"
fi

# 3. The images kubeadm asks for.
step 3 "the control plane's images"
component_image() { # image, base, binary directory, binary, entrypoint (JSON array or empty)
  local target="$1" from="$2" bin="$3" binary="$4" entrypoint="$5" where
  where="$context/image-$binary"
  mkdir -p "$where"
  cp "$bin/$binary" "$where/$binary"
  {
    echo "FROM $from"
    echo "COPY $binary /usr/local/bin/$binary"
    [ -z "$entrypoint" ] || echo "ENTRYPOINT $entrypoint"
  } >"$where/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "$target" "$where" >>"$dir/images.build.log" 2>&1 ||
    fail "docker build of $target failed; see $dir/images.build.log"
}
wanted="$("$dir/bin/kubeadm" config images list --kubernetes-version "$kubernetes_version")"
# containerd's sandbox image (kind's containerd config) may differ from the pause kubeadm lists.
sandbox="$(awk -F'"' '/sandbox_image/ { print $2 }' "$kind_source/images/base/files/etc/containerd/config.toml")"
saved=()
for target in $wanted $sandbox; do
  name="${target##*/}"
  case "${name%%:*}" in
    kube-apiserver | kube-controller-manager) component_image "$target" scratch "$tools_bin" "${name%%:*}" "" ;;
    kube-scheduler) component_image "$target" scratch "$dir/bin" kube-scheduler "" ;;
    kube-proxy) component_image "$target" "$base" "$dir/bin" kube-proxy "" ;;
    etcd) component_image "$target" scratch "$tools_bin" etcd "" ;;
    coredns)
      [ "${name#*:}" = "$coredns_version" ] || fail "kubeadm deploys CoreDNS ${name#*:}; set coredns_version to it"
      component_image "$target" scratch "$dir/bin" coredns '["/usr/local/bin/coredns"]'
      ;;
    pause) component_image "$target" scratch "$dir/bin" pause '["/usr/local/bin/pause"]' ;;
    *) fail "kubeadm asks for $target, which this script does not build" ;;
  esac
  tarball="$dir/images/${name//:/_}.tar"
  docker save -o "$tarball" "$target"
  saved+=("$tarball")
  log "$target"
done

# 4. The node image: kind's files and the binaries, then the images imported into its containerd.
step 4 "the node image"
mkdir -p "$context/node/bin" "$context/node/cni"
cp -r images/kind-node/. "$context/node/"
cp -r "$kind_source/images/base/files" "$context/node/files"
chmod -R u+w "$context/node/files"
cp "$dir/bin/"{containerd,ctr,containerd-shim-runc-v2,crictl,kubelet,kubeadm} "$tools_bin/kubectl" "$context/node/bin/"
cp "$dir/cni/"* "$context/node/cni/"
DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE=$base" --build-arg "KUBERNETES_VERSION=$kubernetes_version" \
  -t "$image.unloaded" "$context/node" >"$dir/node.build.log" 2>&1 || fail "docker build failed; see $dir/node.build.log"
builder="$(docker run -d --privileged --entrypoint=sleep "$image.unloaded" infinity)"
trap 'docker rm -f "$builder" >/dev/null 2>&1; rm -rf "$context"' EXIT
docker exec "$builder" bash -c 'nohup containerd >/dev/null 2>&1 &'
for _ in $(seq 30); do docker exec "$builder" ctr version >/dev/null 2>&1 && break || sleep 1; done
for tarball in "${saved[@]}"; do
  docker exec -i "$builder" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
    --no-unpack --digests - <"$tarball" >>"$dir/import.log" 2>&1 || fail "ctr import of $tarball failed; see $dir/import.log"
done
docker exec "$builder" pkill containerd
docker commit --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' --change 'CMD []' \
  "$builder" "$image" >/dev/null
docker rm -f "$builder" >/dev/null
docker tag "$image" "cellfed-local/kind-node:$kubernetes_version"
docker rmi "$image.unloaded" >/dev/null
log "$image built in $((SECONDS - started)) s ($(docker image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
answer "$@"
