#!/usr/bin/env bash
# Summary: helpers shared by the bench-* scripts (sourced, never run)
#
# Requires BENCH_ROOT. Provides abort/info, the hpbench CLI from the project's
# virtual environment, and run-directory creation.

abort() {
  printf 'bench: %s\n' "$*" >&2
  exit 1
}

info() {
  printf 'bench: %s\n' "$*" >&2
}

# The hpbench CLI from the project's own virtual environment; created on first use.
# Inside a run (HPBENCH_LOG_FILE set) every call appends its structlog events
# as JSON lines to the run's log.
hpbench() {
  local venv="${HPBENCH_VENV:-${BENCH_ROOT}/.venv}"
  if [[ ! -x "${venv}/bin/hpbench" ]]; then
    "${BENCH_ROOT}/benchmarks/libexec/bench-python-env" "${venv}" >&2 \
      || abort "could not set up the Python environment in ${venv}"
  fi
  local -a logging=()
  [[ -n "${HPBENCH_LOG_FILE:-}" ]] && logging=(--log-file "${HPBENCH_LOG_FILE}")
  "${venv}/bin/hpbench" "${logging[@]}" "$@"
}

# The arm's base instructions file name in RUN_DIR/instructions.
instructions_file() {
  if [[ "$1" == control ]]; then echo control.md; else echo treatment.md; fi
}

# The scheduled arms of repetition REP in the order they run, one a line: odd
# repetitions in BENCH_ARMS's order (the mode's baseline first), even ones reversed
# (hpbench.modes.arm_order).
scheduled_arms() {
  local -a arms
  read -r -a arms <<<"${BENCH_ARMS}"
  if (($1 % 2)); then
    printf '%s\n' "${arms[@]}"
  else
    local i
    for ((i = ${#arms[@]} - 1; i >= 0; i--)); do printf '%s\n' "${arms[i]}"; done
  fi
}

# Every arm a topology may hold (hpbench.rundir.Arm).
readonly ALL_ARMS="control hpatch native ctp mentor"

# Each container of a Compose project, one a line: "service id state".
project_containers() {
  docker ps --all --filter "label=com.docker.compose.project=$1" \
    --format '{{.Label "com.docker.compose.service"}} {{.ID}} {{.State}}'
}

# The id of a Compose project's one running container of SERVICE; status 1 (nothing
# printed) when there is none or more than one. `docker exec` and `docker cp` by id
# cost a fraction of their Compose forms.
service_container() {
  local id
  id="$(docker ps --quiet --filter "label=com.docker.compose.project=$1" \
    --filter "label=com.docker.compose.service=$2")"
  [[ -n "${id}" && "${id}" != *$'\n'* ]] || return 1
  printf '%s\n' "${id}"
}

# The in-container HTTP client, probes and proofs (benchmarks/libexec/in-container/proofs),
# for `docker exec ID bash -c "$(proofs_script)" proofs PORT run|get|wait ...`.
proofs_script() {
  cat "${BENCH_ROOT}/benchmarks/libexec/in-container/proofs"
}

# A new private run directory under RUNS_DIR (default: runs/); prints its path. With
# BENCH_RUN_DIR set (bench-suite presets each task's tasks/<id>), that directory instead:
# it must not exist yet (its parent must) or be an empty directory.
make_run_dir() {
  local mode="$1"
  if [[ -n "${BENCH_RUN_DIR:-}" ]]; then
    local preset="${BENCH_RUN_DIR}"
    if [[ -e "${preset}" || -L "${preset}" ]]; then
      [[ -d "${preset}" && ! -L "${preset}" && -z "$(ls -A -- "${preset}")" ]] \
        || abort "BENCH_RUN_DIR=${preset}: exists and is not an empty directory"
    else
      mkdir -- "${preset}" || abort "BENCH_RUN_DIR=${preset}: cannot create the run directory"
    fi
    chmod 0700 "${preset}"
    (cd -- "${preset}" && pwd)
    return
  fi
  local runs_dir="${RUNS_DIR:-${BENCH_ROOT}/runs}"
  mkdir -p "${runs_dir}"
  local stamp
  stamp="$(date -u +%Y%m%dT%H%M%SZ)"
  local run_dir
  run_dir="$(mktemp -d "${runs_dir}/${stamp}-${mode}-XXXXXX")" \
    || abort "cannot create a run directory under ${runs_dir}"
  chmod 0700 "${run_dir}"
  printf '%s\n' "${run_dir}"
}

# Makes the run directory (RUN_DIR, by make_run_dir: BENCH_RUN_DIR presets it) and its plan
# (`hpbench run plan`: settings checked, the task read, configs written), sources plan.env,
# provisions the machine and checks that the engine has the agent's runtime. A refused plan
# or a missing runtime leaves nothing behind.
plan_run() {
  local mode="$1"
  local -a replay=()
  # HPBENCH_REPLAY_DIR swaps in other scripts (the test suite's failure scenarios).
  [[ -n "${HPBENCH_REPLAY_DIR:-}" ]] && replay=(--replay-dir "${HPBENCH_REPLAY_DIR}")
  RUN_DIR="$(make_run_dir "${mode}")"
  hpbench run plan "${mode}" "${RUN_DIR}" "${replay[@]}" >/dev/null \
    || { rm -rf -- "${RUN_DIR}"; exit 1; }
  # shellcheck source=/dev/null  # written by hpbench run plan: quoted export lines only
  source "${RUN_DIR}/plan.env"
  "${BENCH_ROOT}/benchmarks/provision.sh"
  if ! docker info --format '{{range $name, $_ := .Runtimes}}{{$name}} {{end}}' \
    | grep -qw -- "${HPBENCH_AGENT_RUNTIME}"; then
    rm -rf -- "${RUN_DIR}"
    abort "AGENT_RUNTIME=${HPBENCH_AGENT_RUNTIME}: the Docker engine has no such runtime (docker info lists its runtimes)"
  fi
  # hpbench never pulls: a router image other than the reference router's (which
  # bench-images builds) must already be in the local engine.
  # Each scheduled arm's: HPATCH_ROUTER_IMAGE for every Hpatch arm, CONTROL_ROUTER_IMAGE
  # for the control, checked last (it defaults to the Hpatch router's, which is named then).
  local arm image variable setting
  local -a ordered=()
  for arm in ${BENCH_ARMS}; do [[ "${arm}" == control ]] || ordered+=("${arm}"); done
  [[ " ${BENCH_ARMS} " == *" control "* ]] && ordered+=(control)
  for arm in "${ordered[@]}"; do
    variable="HPBENCH_${arm^^}_ROUTER_IMAGE"
    image="${!variable}"
    setting=HPATCH_ROUTER_IMAGE
    [[ "${arm}" == control && "${image}" != "${HPBENCH_HPATCH_ROUTER_IMAGE}" ]] \
      && setting=CONTROL_ROUTER_IMAGE
    [[ "${image}" == "${BENCH_REFERENCE_ROUTER_IMAGE}" ]] && continue
    if ! docker image inspect "${image}" >/dev/null 2>&1; then
      rm -rf -- "${RUN_DIR}"
      abort "${setting}=${image}: no such image in the local Docker engine (hpbench never pulls; build or load it first)"
    fi
  done
}

# --- What agents mount, at paths that name nothing ---
# A container's /proc/self/mountinfo shows each bind mount's source path. A source under
# the run directory would tell the agent the checkout's location, the run id and its arm.
# So whatever an agent mounts lives in a random directory under the run's mount root
# (HPBENCH_MOUNT_BASE, default /var/tmp), and the run directory keeps a symlink to it:
# Docker resolves the symlink, so only the random path reaches the container.
# release_mounts moves the contents back into the run directory when the run ends.

# The run's mount root (made on first use, mode 0700); prints its path.
mount_root() {
  local run_dir="$1" root
  if [[ ! -L "${run_dir}/.mounts" ]]; then
    local base="${HPBENCH_MOUNT_BASE:-/var/tmp}"
    root="$(mktemp -d "${base}/XXXXXXXXXXXX")" || abort "cannot create a mount root under ${base}"
    ln -s "${root}" "${run_dir}/.mounts"
  fi
  readlink "${run_dir}/.mounts"
}

# A fresh neutral path (not yet created) for LINK, which becomes a symlink to it; prints it.
# Each link is listed in RUN_DIR/.mount-links, the only links release_mounts touches.
neutral_path() {
  local run_dir="$1" link="$2" dir
  dir="$(mktemp -d "$(mount_root "${run_dir}")/XXXXXXXXXXXX")" || abort "cannot create a mount directory"
  chmod 0755 "${dir}"
  mkdir -p "$(dirname "${link}")"
  ln -s "${dir}/m" "${link}"
  printf '%s\0' "${link}" >>"${run_dir}/.mount-links"
  printf '%s\n' "${dir}/m"
}

# A read-only neutral copy of FILE (mode 0644) named NAME; prints its path.
neutral_copy() {
  local run_dir="$1" file="$2" name="$3" dir
  dir="$(mktemp -d "$(mount_root "${run_dir}")/XXXXXXXXXXXX")" || abort "cannot create a mount directory"
  chmod 0755 "${dir}"
  install -m 0644 "${file}" "${dir}/${name}"
  printf '%s\n' "${dir}/${name}"
}

# Moves every neutral directory back behind its listed symlink and removes the root.
# Safe to call twice. Only the links neutral_path made are read: a symlink an agent
# planted in its workspace is never taken for one, and nothing is followed.
release_mounts() {
  local run_dir="$1" root link target
  [[ -L "${run_dir}/.mounts" ]] || return 0
  root="$(readlink "${run_dir}/.mounts")"
  local -a links=()
  [[ -f "${run_dir}/.mount-links" ]] && mapfile -t -d '' links <"${run_dir}/.mount-links"
  for link in "${links[@]}"; do
    [[ -L "${link}" ]] || continue
    target="$(readlink "${link}")"
    [[ "${target}" == "${root}/"*/m ]] || continue
    rm -f "${link}"
    if [[ -e "${target}" || -L "${target}" ]]; then mv "${target}" "${link}"; fi
  done
  rm -rf "${root}"
  rm -f "${run_dir}/.mounts" "${run_dir}/.mount-links"
}

# Exports HPBENCH_<ARM>_WORKSPACE, _CODEX_CONFIG and _INSTRUCTIONS for compose.yaml: a
# fresh copy of the base snapshot (BENCH_BASE_REVISION) the agent user (uid 1000) owns,
# the run's Codex config of ARM and its INSTRUCTIONS file, each at a neutral path;
# RUN_DIR links the workspace as LINK.
mount_arm() {
  local run_dir="$1" arm="$2" link="$3" instructions="$4" workspace
  local upper="${arm^^}"
  workspace="$(neutral_path "${run_dir}" "${link}")"
  "${BENCH_ROOT}/benchmarks/libexec/bench-snapshot" "${run_dir}/task-repo" \
    "${BENCH_BASE_REVISION:?}" "${workspace}"
  if [[ "${EUID}" -eq 0 ]]; then chown -R 1000:1000 "${workspace}"; else chmod -R a+rwX "${workspace}"; fi
  instructions="$(neutral_copy "${run_dir}" "${instructions}" instructions.md)"
  export "HPBENCH_${upper}_WORKSPACE=${workspace}" "HPBENCH_${upper}_INSTRUCTIONS=${instructions}"
  # Read by the agent user through a read-only bind mount; it holds no secret.
  export "HPBENCH_${upper}_CODEX_CONFIG=$(neutral_copy "${run_dir}" \
    "${run_dir}/codex/${arm}/config.toml" config.toml)"
}

# DIR laid out from LIST's trusted "relative<TAB>source" lines (a grader spec's
# hidden-files): the task's hidden files at their workspace paths. A relative path that
# could leave the tree (absolute, empty, . or .. components) or a name listed twice stops.
lay_out_hidden() {
  local list="$1" dir="$2" relative source part
  install -d -m 0755 "${dir}"
  while IFS=$'\t' read -r relative source; do
    [[ -n "${relative}" ]] || continue
    [[ "${relative}" != /* ]] || abort "hidden file path ${relative} is absolute"
    local -a parts
    IFS=/ read -r -a parts <<<"${relative}"
    for part in "${parts[@]}"; do
      [[ -n "${part}" && "${part}" != . && "${part}" != .. ]] \
        || abort "hidden file path ${relative} is not a plain relative path"
    done
    [[ -f "${source}" ]] || abort "hidden file ${source} does not exist"
    [[ ! -e "${dir}/${relative}" ]] || abort "hidden file path ${relative} is listed twice"
    install -D -m 0644 "${source}" "${dir}/${relative}"
  done <"${list}"
}

# --- Router evidence ---

# A router's evidence into OUT: its /api/metrics snapshot (metrics.json, or the status
# line in metrics.stderr) and its capture directory; OUT/collected marks the attempt.
# Status 1 when either could not be had (what could is kept). The snapshot is asked from
# the sentinel (SENTINEL_ID: hpbench's own container on the egress network, with the one
# HTTP client, in-container/proofs) by the router's service name; nothing runs inside the
# router (ROUTER_ID), a plug-in image that need not hold a shell. `docker cp` reads any.
collect_router() {
  local sentinel="$1" service="$2" id="$3" out="$4" status=0
  mkdir -p "${out}"
  timeout 20 docker exec "${sentinel}" bash -c "$(proofs_script)" proofs 8080 get "${service}" /api/metrics \
    </dev/null >"${out}/metrics.json" 2>"${out}/metrics.stderr" || status=1
  rm -rf "${out}/capture"
  docker cp "${id}:/capture" "${out}/capture" >/dev/null 2>&1 || status=1
  : >"${out}/collected"
  return "${status}"
}

# --- Compose (container platform) ---

# codex_version from ROOT/contrib/codex/pins.toml (hpbench checks the file's form): the
# Codex version's one pin, which bench-images builds the images with.
pinned_codex_version() {
  local version
  version="$(awk -F'"' '/^codex_version[[:space:]]*=/ { print $2; exit }' \
    "$1/contrib/codex/pins.toml" 2>/dev/null)"
  [[ -n "${version}" ]] || abort "no codex_version in $1/contrib/codex/pins.toml"
  printf '%s\n' "${version}"
}

# The topology file, and the images every topology and the grader use.
COMPOSE_FILE="${COMPOSE_FILE:-${BENCH_ROOT}/compose.yaml}"
HPBENCH_IMAGE_TAG="${HPBENCH_IMAGE_TAG:-local}"
export COMPOSE_FILE HPBENCH_IMAGE_TAG

# A fresh Compose project name: hpbench-<12 random hex digits>. It is random, not the
# run id, because agents see it: in their volumes' paths (/proc/self/mountinfo) and in
# their containers' DNS names. The run directory lists its projects (compose-projects).
compose_project_name() {
  printf 'hpbench-%s\n' "$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
}

# Extra `-f FILE` arguments, one a line, from BENCH_COMPOSE_OVERRIDES (colon-separated).
# Tests use it to inject faults (an agent on the wrong network, say); runs leave it empty.
compose_override_args() {
  local file
  local -a files
  IFS=':' read -r -a files <<<"${BENCH_COMPOSE_OVERRIDES:-}"
  for file in "${files[@]}"; do
    [[ -n "${file}" ]] || continue
    [[ -f "${file}" ]] || abort "BENCH_COMPOSE_OVERRIDES names ${file}, which does not exist"
    printf '%s\n%s\n' -f "${file}"
  done
}

# Placeholders for the per-run variables compose.yaml requires, for commands
# that only build or inspect (never for `up`, which must get real paths).
compose_placeholders() {
  local var arm
  local -a vars=(HPBENCH_GOMODCACHE HPBENCH_PROVIDER_SCRIPTS)
  for arm in ${ALL_ARMS}; do
    vars+=("HPBENCH_${arm^^}_WORKSPACE" "HPBENCH_${arm^^}_CODEX_CONFIG" "HPBENCH_${arm^^}_INSTRUCTIONS")
  done
  for var in "${vars[@]}"; do
    if [[ -z "${!var:-}" ]]; then
      export "${var}=/nonexistent"
    fi
  done
}

# Seconds since the epoch with a fraction, and a phase record "<phase>\t<seconds>".
now() { date +%s.%N; }

record_phase() {
  local file="$1" phase="$2" started="$3"
  awk -v phase="${phase}" -v end="$(now)" -v start="${started}" \
    'BEGIN { printf "%s\t%.1f\n", phase, end - start }' >>"${file}"
}

# Status 0 when no input of the run's task (manifest, prompt, hidden grader files)
# changed since `hpbench run plan` recorded their digests: sha256sum rechecks them
# without starting Python.
task_unchanged() {
  sha256sum --quiet --status -c "$1/fingerprint-inputs.sha256" 2>/dev/null
}
