#!/usr/bin/env bash
# Summary: set up this machine and run every check hpbench has
# Usage: tests/run.sh [PYTEST_ARGS...]
#
# Provisions what the tests need (benchmarks/provision.sh: Docker engine,
# Compose plugin, base image, Go, the pinned Codex CLI), creates the virtual
# environment, then runs ruff, the formatter check, mypy --strict, shellcheck
# and the pytest suite (four pytest-xdist workers; PYTEST_ARGS come after, so `-n 0`
# runs it in one process). Any failure fails the whole command.
set -euo pipefail
[[ -n "${BENCH_DEBUG:-}" ]] && set -x

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
cd "${ROOT}"

step() { printf '\n== %s\n' "$*" >&2; }

ensure_shellcheck() {
  command -v shellcheck >/dev/null && return
  if [[ "${EUID}" -eq 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >&2
  else
    echo "tests: shellcheck is missing; fix: apt-get install shellcheck" >&2
    exit 1
  fi
}

main() {
  step "provision"
  "${ROOT}/benchmarks/provision.sh"
  ensure_shellcheck
  step "python environment"
  "${ROOT}/benchmarks/libexec/bench-python-env" "${ROOT}/.venv"
  local venv="${ROOT}/.venv/bin"

  step "ruff"
  "${venv}/ruff" check hpbench tests benchmarks
  "${venv}/ruff" format --check hpbench tests benchmarks
  step "mypy --strict"
  "${venv}/mypy" --strict hpbench
  step "shellcheck"
  local -a scripts
  mapfile -t scripts < <(grep -rlE '^#!(/usr/bin/env bash|/bin/sh)' benchmarks tests .ci contrib | sort)
  shellcheck -x "${scripts[@]}"
  step "pytest"
  # Most of the time goes to end-to-end runs waiting on their containers, which overlap
  # well even on two cores. A module's tests run in one worker, in order, as written
  # (module-scoped fixtures, resources shared by name, checks of engine-wide state);
  # tests/conftest.py orders the modules longest first. The slowest tests are listed.
  "${venv}/pytest" -n 4 --dist loadfile --no-loadscope-reorder --durations=25 "$@"
}

main "$@"
