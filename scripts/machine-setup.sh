#!/usr/bin/env bash
# One-time machine set-up for kind cells (`npm run cells -- up --provider kind`): a Docker engine from
# Debian's packages, made to run the privileged containers kind needs where root lacks CAP_SYS_RESOURCE (a
# sandbox or a micro-VM), and started if nothing supervises it. Idempotent: a second run changes nothing.
# Nothing here is needed by the local provider or the README's test command. On a laptop with Docker
# Desktop or a running engine it only checks that the engine answers.
set -euo pipefail

log() { printf 'machine-setup: %s\n' "$*" >&2; }
fail() {
  log "$*"
  exit 1
}

engine_answers() { docker info >/dev/null 2>&1; }

wrapper=/usr/local/bin/cellfed-runc
# An engine that answers is left alone, unless it runs this script's runc wrapper, which is kept current.
if engine_answers && [ -z "${CELLFED_SETUP_FORCE:-}" ] && { [ ! -f "$wrapper" ] || [ "$(id -u)" != 0 ]; }; then
  log "a Docker engine answers: $(docker version --format '{{.Server.Version}}' 2>/dev/null)"
  exit 0
fi
[ "$(id -u)" = 0 ] || fail "installing and starting a Docker engine needs root; run: sudo bash $0"

# 1. The engine (and jq for the runc wrapper, debootstrap for the base images kind-images.sh builds).
missing=()
for tool in dockerd docker runc jq debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing docker.io, jq and debootstrap from Debian's packages (missing: ${missing[*]})"
  apt-get update -qq || fail "apt-get update failed: are Debian's package mirrors reachable?"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io jq debootstrap >/dev/null ||
    fail "apt-get install docker.io jq debootstrap failed"
fi

# 2. Privileged containers: runc applies every capability a privileged container asks for, and fails
# ("unable to apply caps: operation not permitted") for one the engine's own root does not hold. The
# wrapper drops, from each container's OCI config, the capabilities this root lacks, then runs runc.
runc="$(command -v runc)"
held="$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)"
desired="$(
  cat <<EOF
#!/bin/sh
# Written by cellfed's scripts/machine-setup.sh: runc without the capabilities this machine's root lacks
# (bounding set $held), so that privileged containers (kind's nodes) start.
bundle=.
process=
prev=
for arg in "\$@"; do
  case "\$prev" in --bundle | -b) bundle="\$arg" ;; --process | -p) process="\$arg" ;; esac
  case "\$arg" in --bundle=*) bundle="\${arg#--bundle=}" ;; --process=*) process="\${arg#--process=}" ;; esac
  prev="\$arg"
done
# A container's config.json (create, run) or an exec's process.json: the same capability lists.
for spec in "\$bundle/config.json" "\$process"; do
  [ -n "\$spec" ] && [ -f "\$spec" ] || continue
  held=\$((0x$held))
  tmp="\$spec.cellfed"
  jq --argjson held "\$held" '
    def names: ["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_DAC_READ_SEARCH","CAP_FOWNER","CAP_FSETID","CAP_KILL",
      "CAP_SETGID","CAP_SETUID","CAP_SETPCAP","CAP_LINUX_IMMUTABLE","CAP_NET_BIND_SERVICE","CAP_NET_BROADCAST",
      "CAP_NET_ADMIN","CAP_NET_RAW","CAP_IPC_LOCK","CAP_IPC_OWNER","CAP_SYS_MODULE","CAP_SYS_RAWIO",
      "CAP_SYS_CHROOT","CAP_SYS_PTRACE","CAP_SYS_PACCT","CAP_SYS_ADMIN","CAP_SYS_BOOT","CAP_SYS_NICE",
      "CAP_SYS_RESOURCE","CAP_SYS_TIME","CAP_SYS_TTY_CONFIG","CAP_MKNOD","CAP_LEASE","CAP_AUDIT_WRITE",
      "CAP_AUDIT_CONTROL","CAP_SETFCAP","CAP_MAC_OVERRIDE","CAP_MAC_ADMIN","CAP_SYSLOG","CAP_WAKE_ALARM",
      "CAP_BLOCK_SUSPEND","CAP_AUDIT_READ","CAP_PERFMON","CAP_BPF","CAP_CHECKPOINT_RESTORE"];
    def bit(\$i): ((\$held / pow(2; \$i)) | floor) % 2 == 1;
    [names | to_entries[] | select(bit(.key) | not) | .value] as \$lacking
    | def held_only: with_entries(.value |= map(select(. as \$c | \$lacking | index(\$c) | not)));
    if .process.capabilities then .process.capabilities |= held_only
    elif .capabilities then .capabilities |= held_only
    else . end' "\$spec" >"\$tmp" && mv "\$tmp" "\$spec"
done
exec $runc "\$@"
EOF
)"
if [ ! -f "$wrapper" ] || [ "$(cat "$wrapper")" != "$desired" ]; then
  log "writing $wrapper (drops the capabilities root lacks: bounding set $held)"
  printf '%s\n' "$desired" >"$wrapper"
  chmod 755 "$wrapper"
fi

# 3. The engine's configuration: the wrapper as the default runtime.
daemon_json=/etc/docker/daemon.json
want='{"default-runtime":"cellfed-runc","runtimes":{"cellfed-runc":{"path":"/usr/local/bin/cellfed-runc"}}}'
mkdir -p /etc/docker
if [ ! -f "$daemon_json" ] || [ "$(jq -cS . "$daemon_json" 2>/dev/null)" != "$(jq -cS . <<<"$want")" ]; then
  [ -f "$daemon_json" ] && jq -e . "$daemon_json" >/dev/null 2>&1 &&
    want="$(jq -c --argjson add "$want" '. * $add' "$daemon_json")"
  log "writing $daemon_json (default runtime cellfed-runc)"
  printf '%s\n' "$want" >"$daemon_json"
  restart=1
fi

# 4. Started: by systemd where it runs, else in the background with its log in /var/log/dockerd.log.
if [ -d /run/systemd/system ]; then
  if [ -n "${restart:-}" ]; then systemctl restart docker; else systemctl start docker; fi
else
  if [ -n "${restart:-}" ] && pgrep -x dockerd >/dev/null; then
    log "restarting dockerd for its new configuration"
    pkill -x dockerd
    for _ in $(seq 30); do pgrep -x dockerd >/dev/null || break; sleep 1; done
  fi
  if ! pgrep -x dockerd >/dev/null; then
    log "starting dockerd (log: /var/log/dockerd.log)"
    setsid nohup dockerd >/var/log/dockerd.log 2>&1 </dev/null &
  fi
fi
for _ in $(seq 60); do
  engine_answers && break
  sleep 1
done
engine_answers || fail "dockerd did not answer within 60 s; see /var/log/dockerd.log"
log "the Docker engine answers: $(docker version --format '{{.Server.Version}}'), runtime $(docker info --format '{{.DefaultRuntime}}')"
