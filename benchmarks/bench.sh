#!/usr/bin/env bash
# Summary: run the hpbench benchmark in one of its modes
# Usage: benchmarks/bench.sh [MODE]       (or: MODE=<mode> benchmarks/bench.sh)
#
# Modes: paired (default), control-only, hpatch-only, hpatch-diagnostic,
# ctp-only, mentor-handoff, preparation-only; and the commands router-check
# (ROUTER_IMAGE=<image>: the router conformance check) and `resume RUN_DIR` (a
# stopped run, continued with its own settings: docs/resume.md). Each is a script
# benchmarks/libexec/bench-<mode>; this file only validates the mode and
# dispatches, so it works from any working directory.
#
# Several tasks: TASK=a,b,c with a measuring mode runs each task's repetitions
# one task after another in one suite directory, then pools them
# (benchmarks/libexec/bench-suite, docs/suites.md).
set -euo pipefail
[[ -n "${BENCH_DEBUG:-}" ]] && set -x

BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly BENCH_ROOT
export BENCH_ROOT
readonly MODES="paired control-only hpatch-only hpatch-diagnostic ctp-only mentor-handoff preparation-only router-check resume"

# shellcheck source=benchmarks/libexec/bench-lib.sh
source "${BENCH_ROOT}/benchmarks/libexec/bench-lib.sh"

main() {
  local mode="${MODE:-paired}"
  if [[ $# -gt 0 && "$1" != -* ]]; then
    if [[ -n "${MODE:-}" && "${MODE}" != "$1" ]]; then
      abort "MODE=${MODE} and the argument '$1' disagree; give the mode once"
    fi
    mode="$1"
    shift
  fi
  case " ${MODES} " in
    *" ${mode} "*) ;;
    *) abort "MODE '${mode}' is not a mode (expected one of: ${MODES})" ;;
  esac
  local command_path="${BENCH_ROOT}/benchmarks/libexec/bench-${mode}"
  if [[ ! -x "${command_path}" ]]; then
    abort "MODE '${mode}': ${command_path} is missing or not executable (an incomplete checkout?)"
  fi
  export MODE="${mode}"
  exec "${command_path}" "$@"
}

main "$@"
