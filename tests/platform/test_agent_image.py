"""The agent image's `codex` is the pinned Codex CLI, started exactly as npm starts it."""

from __future__ import annotations

import subprocess

import pytest

from hpbench.instructions.pins import default_pins_path, load_pins

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("images")]

LAUNCHER = "/opt/codex/bin/codex"

# Starts Codex through each argument in turn, on a provider that refuses connections
# so it stays alive retrying, and prints the native process's executable, argv and
# sorted environment before stopping it. The launcher execve()s the binary where Node
# can and spawns it as a child otherwise (Debian's Node 18), so the native process is
# found by its executable. Bash's own `_` (the path it ran) may differ.
PROCESS_SCRIPT = r"""
cd /tmp
for command in "$@"; do
"${command}" exec --skip-git-repo-check \
  -c 'model_providers.x={name="x",base_url="http://127.0.0.1:9/v1",env_key="K"}' \
  -c model_providers.x.wire_api=responses -c model_provider=x hi </dev/null >/dev/null 2>&1 &
started=$!
native=""
for _ in $(seq 50); do
  for proc in /proc/[0-9]*; do
    [[ "$(readlink "${proc}/exe" 2>/dev/null)" == */vendor/*/bin/codex ]] && native="${proc}"
  done
  [[ -n "${native}" ]] && break
  sleep 0.1
done
[[ -n "${native}" ]] || { echo "no native codex process" >&2; exit 1; }
readlink "${native}/exe"
tr '\0' '\n' <"${native}/cmdline"
echo ---
tr '\0' '\n' <"${native}/environ" | grep -v '^_=' | sort
kill "${native#/proc/}" "${started}" 2>/dev/null
wait
echo ===
done
"""


def _process(*commands: str) -> str:
    done = subprocess.run(
        [
            "docker", "run", "--rm", "--network", "none", "-e", "K=offline",
            "hpbench-agent:local", "bash", "-c", PROCESS_SCRIPT, "probe", *commands,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )  # fmt: skip
    assert 0 == done.returncode, done.stderr
    return done.stdout


class TestCodexCommand:
    def test_same_process_as_the_npm_launcher(self) -> None:
        """`codex` runs the same native binary with the same argv and environment as the
        npm launcher (which Node would otherwise start on every call)."""
        through_launcher, through_codex = _process(LAUNCHER, "codex").split("===\n")[:2]
        assert "CODEX_MANAGED_BY_NPM=1" in through_launcher
        assert "CODEX_MANAGED_PACKAGE_ROOT=/opt/codex/lib/node_modules/@openai/codex" in (
            through_launcher
        )
        assert through_launcher == through_codex

    def test_pinned_version(self) -> None:
        """Both report the pinned version."""
        done = subprocess.run(
            [
                "docker", "run", "--rm", "--network", "none", "hpbench-agent:local",
                "bash", "-c", f"codex --version && {LAUNCHER} --version",
            ],
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        pinned = load_pins(default_pins_path()).pins.codex_version
        assert [f"codex-cli {pinned}", f"codex-cli {pinned}"] == done.stdout.splitlines()
