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
hpbench() {
  local venv="${HPBENCH_VENV:-${BENCH_ROOT}/.venv}"
  if [[ ! -x "${venv}/bin/hpbench" ]]; then
    "${BENCH_ROOT}/benchmarks/libexec/bench-python-env" "${venv}" >&2 \
      || abort "could not set up the Python environment in ${venv}"
  fi
  "${venv}/bin/hpbench" "$@"
}

# A new private run directory under RUNS_DIR (default: runs/); prints its path.
make_run_dir() {
  local mode="$1"
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
