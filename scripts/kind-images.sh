#!/usr/bin/env bash
# Builds, on a machine that reaches no container registry, every image the kind provider runs:
#   1. stand-ins for the two public base images the app Dockerfile names (node:24-bookworm-slim for the build
#      stage, gcr.io/distroless/nodejs24-debian12:nonroot to run), made from a Debian rootfs (debootstrap)
#      and the Node.js 24 binary scripts/lib/node.sh provides, tagged with the public names, so the real
#      Dockerfile builds unchanged (a tag swap, never a fork). Skipped where the real images are present;
#   2. the router's and the controllers' images from that Dockerfile (images/app/Dockerfile, through
#      scripts/build-image.sh), tagged as the chart expects.
# Each stand-in is built once per key (Debian suite, Node.js version) and reused; app images are rebuilt
# each run (the sources change). Prints the app images on stdout, progress on stderr. Needs a Docker engine:
# scripts/machine-setup.sh. kind's node image: scripts/kind-node-image.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/node.sh
cellfed_ensure_node

log() { printf 'kind-images: %s\n' "$*" >&2; }
fail() {
  log "$*"
  exit 1
}

docker info >/dev/null 2>&1 || fail "no Docker engine answers; set one up with: sudo bash scripts/machine-setup.sh"

suite=bookworm
mirror="${CELLFED_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
node_bin="$(command -v node)"
node_version="$(node --version)"
npm_dir="$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)"
cache="$cellfed_cache/images"
mkdir -p "$cache"
has_image() { docker image inspect "$1" >/dev/null 2>&1; }

# 1a. The Debian rootfs both stand-ins start from.
base=cellfed-local/debian:$suite
if ! has_image "$base"; then
  tarball="$cache/debian-$suite-minbase.tar"
  if [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null || fail "debootstrap is missing: sudo bash scripts/machine-setup.sh installs it"
    log "debootstrap $suite (minbase) from $mirror: about 30 s"
    rootfs="$(mktemp -d)"
    debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
      fail "debootstrap failed; see $cache/debootstrap.log"
    tar -C "$rootfs" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
    rm -rf "$rootfs"
  fi
  log "importing $base"
  docker import "$tarball" "$base" >/dev/null
fi

# 1b. The stand-ins, keyed by what decides them.
key="$suite-node-$node_version"
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$node_bin" "$context/node"
cp /etc/ssl/certs/ca-certificates.crt "$context/ca-certificates.crt"

# A stand-in is missing, or ours from another key; a real image (no label: pulled) is used as it is.
needs_stand_in() {
  has_image "$1" || return 0
  local label
  label="$(docker image inspect -f '{{index .Config.Labels "io.cellfed.stand-in"}}' "$1")"
  [ -n "$label" ] && [ "$label" != "$key" ]
}

build_node=node:24-bookworm-slim
if needs_stand_in "$build_node"; then
  log "building the stand-in $build_node (Node.js $node_version, npm from $npm_dir)"
  cp -r "$npm_dir" "$context/npm"
  cat >"$context/Dockerfile" <<EOF
FROM $base
LABEL io.cellfed.stand-in="$key"
# npm inside a build reaches the registry with the host's CA bundle.
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY node /usr/local/bin/node
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm_config_update_notifier=false
CMD ["node"]
EOF
  DOCKER_BUILDKIT=0 docker build -q -t "$build_node" "$context" >"$cache/stand-ins.build.log" 2>&1 ||
    fail "docker build of $build_node failed; see $cache/stand-ins.build.log"
  rm -rf "$context/npm"
fi

run_node=gcr.io/distroless/nodejs24-debian12:nonroot
if needs_stand_in "$run_node"; then
  log "building the stand-in $run_node (Node.js $node_version at /nodejs/bin/node, user 65532)"
  cat >"$context/Dockerfile" <<EOF
FROM $base
LABEL io.cellfed.stand-in="$key"
COPY node /nodejs/bin/node
RUN echo 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >>/etc/passwd \\
 && echo 'nonroot:x:65532:' >>/etc/group && mkdir -p /home/nonroot && chown 65532:65532 /home/nonroot
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node"]
EOF
  DOCKER_BUILDKIT=0 docker build -q -t "$run_node" "$context" >"$cache/stand-ins.build.log" 2>&1 ||
    fail "docker build of $run_node failed; see $cache/stand-ins.build.log"
fi

# 2. The project's images, from its Dockerfile (images/app), tagged with the chart's version.
version="$(awk '$1 == "appVersion:" { gsub(/["\047]/, "", $2); print $2 }' charts/cellfed/Chart.yaml)"
for app in cell-router rebalance-controller backup-controller; do
  started=$SECONDS
  log "building ghcr.io/cellfed/$app:$version"
  DOCKER_BUILDKIT=0 CELLFED_IMAGE_REPOSITORY=ghcr.io/cellfed CELLFED_IMAGE_TAG="$version" \
    bash scripts/build-image.sh "$app" -q >"$cache/$app.build.log" 2>&1 ||
    fail "docker build of $app failed; see $cache/$app.build.log"
  log "ghcr.io/cellfed/$app:$version built in $((SECONDS - started)) s"
  echo "ghcr.io/cellfed/$app:$version"
done
docker image prune -f >/dev/null
