"""The scripted provider as an outside-provider stand-in: HTTPS, a key, its own network.

A real run's routers reach a provider such as ``https://api.example/v1`` over TLS
with a key. :func:`outside_provider` puts the scripted provider where that
provider would be, with nothing real involved:

- a throwaway test CA and a server certificate for the address it is reached at,
  made with the ``openssl`` command line in the caller's directory;
- a Docker network of its own (``docker network create``, a random name, not
  internal, the subnet Docker picks) and the ``hpbench-provider`` image on it as a
  plain ``docker run -d`` container (no Compose project), serving HTTPS on 8443
  with ``--api-key-env`` and the caller's script(s);
- port 8443 published only on that network's gateway address
  (``-p <gateway>::8443``), so a container on any other network with a route out
  (a non-internal one) reaches it at ``https://<gateway>:<port>/v1``, while no
  public address of the host listens and no internal network can reach it.

Use it in a test or a fixture::

    with outside_provider(script, tmp_path) as outside:
        ...  # outside.url, outside.ca_bundle, outside.key, outside.records()

Leaving the block removes the container and the network, whether the test
passed or not.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

KEY_ENV = "HPBENCH_OUTSIDE_KEY"
"""The environment variable that carries the key into the provider container."""
KEY_PREFIX = "sk-hpbench-fake-"
CONTAINER_PORT = 8443
LABEL = "org.hpbench.test=outside-provider"
MOUNT = "/outside"
READY_TIMEOUT = 30.0


def image_tag() -> str:
    """``HPBENCH_IMAGE_TAG``, default ``local``."""
    return os.environ.get("HPBENCH_IMAGE_TAG") or "local"


def provider_image() -> str:
    """The provider image of this tree's tag."""
    return f"hpbench-provider:{image_tag()}"


def router_image() -> str:
    """The router image (it has python3, so tests use it as a client)."""
    return f"hpbench-router:{image_tag()}"


def docker(*args: str, env: Mapping[str, str] | None = None, timeout: float = 120) -> str:
    """Run ``docker ARGS``; its stdout, stripped. Raises with stderr on failure."""
    done = subprocess.run(
        ["docker", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    if done.returncode != 0:
        msg = f"docker {' '.join(args[:3])} ... failed ({done.returncode}): {done.stderr.strip()}"
        raise RuntimeError(msg)
    return done.stdout.strip()


def _openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(
        ["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    if done.returncode != 0:
        msg = f"openssl {args[0]} failed: {done.stderr.strip()}"
        raise RuntimeError(msg)


_CA_CONFIG = """\
[req]
distinguished_name = dn
prompt = no
x509_extensions = ca
[dn]
CN = {name}
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""

_SERVER_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = {alt_names}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
"""


@attrs.frozen
class TestCa:
    """A throwaway CA: its certificate (the bundle a client trusts) and its key."""

    cert: Path
    key: Path


@attrs.frozen
class ServerCert:
    """A server certificate signed by a :class:`TestCa`, and its key."""

    cert: Path
    key: Path


def make_ca(directory: Path, name: str = "hpbench throwaway test CA") -> TestCa:
    """A new P-256 CA (valid two days) in ``directory``."""
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "ca.cnf"
    config.write_text(_CA_CONFIG.format(name=name), encoding="utf-8")
    _openssl(
        "req",
        "-x509",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-config",
        "ca.cnf",
        "-keyout",
        "ca-key.pem",
        "-out",
        "ca.pem",
        cwd=directory,
    )
    return TestCa(directory / "ca.pem", directory / "ca-key.pem")


def make_server_cert(
    ca: TestCa, directory: Path, *, ips: Sequence[str] = (), dns: Sequence[str] = ()
) -> ServerCert:
    """A server certificate whose subjectAltName is ``ips`` and ``dns``, signed by ``ca``."""
    if not ips and not dns:
        msg = "a server certificate needs at least one IP address or DNS name"
        raise ValueError(msg)
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    alt_names = ", ".join([*(f"IP:{ip}" for ip in ips), *(f"DNS:{name}" for name in dns)])
    (directory / "server.ext").write_text(
        _SERVER_EXTENSIONS.format(alt_names=alt_names), encoding="utf-8"
    )
    _openssl(
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        "/CN=hpbench scripted provider (outside stand-in)",
        "-keyout",
        "server-key.pem",
        "-out",
        "server.csr",
        cwd=directory,
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        str(ca.cert),
        "-CAkey",
        str(ca.key),
        "-set_serial",
        str(secrets.randbits(63)),
        "-days",
        "2",
        "-sha256",
        "-extfile",
        "server.ext",
        "-out",
        "server.pem",
        cwd=directory,
    )
    return ServerCert(directory / "server.pem", directory / "server-key.pem")


def fake_key() -> str:
    """A recognisable fake key: ``sk-hpbench-fake-<32 hex digits>``."""
    return KEY_PREFIX + secrets.token_hex(16)


@attrs.frozen
class OutsideProvider:
    """A running stand-in and how to reach and inspect it."""

    url: str
    """``https://<gateway>:<port>/v1``: a single script answers ``POST <url>/responses``."""
    ca_bundle: Path
    """The test CA's PEM certificate: the only bundle that verifies the server."""
    key: str
    """The key the provider wants (``Authorization: Bearer <key>``)."""
    container: str
    """The container id."""
    network: str
    """The name of the provider's own network."""
    gateway: str
    """That network's gateway address: the only address the port is published on."""
    port: int
    """The host port published on ``gateway``."""
    scripts: tuple[str, ...]
    """The script names served (``default`` for a single unnamed script)."""
    workdir: Path

    def url_for(self, script: str) -> str:
        """``https://<gateway>:<port>/<script>/v1`` (one script of several)."""
        if script not in self.scripts:
            msg = f"no script {script!r}; served: {', '.join(self.scripts)}"
            raise KeyError(msg)
        return f"https://{self.gateway}:{self.port}/{script}/v1"

    def records(self) -> list[dict[str, Any]]:
        """The provider's request records so far (``/records/provider.jsonl``, via docker cp)."""
        target = self.workdir / f"provider-{secrets.token_hex(4)}.jsonl"
        docker("cp", f"{self.container}:/records/provider.jsonl", str(target))
        try:
            text = target.read_text(encoding="utf-8")
        finally:
            target.unlink(missing_ok=True)
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def logs(self) -> str:
        """What the provider wrote to stdout and stderr so far."""
        done = subprocess.run(
            ["docker", "logs", self.container],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        return done.stdout + done.stderr


def _gateway(network: str) -> str:
    gateway = docker(
        "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Gateway}} {{end}}", network
    ).split()
    ipv4 = [address for address in gateway if "." in address]
    if not ipv4:
        msg = f"network {network} has no IPv4 gateway"
        raise RuntimeError(msg)
    return ipv4[0]


def _published_port(container: str, gateway: str) -> int:
    for line in docker("port", container, f"{CONTAINER_PORT}/tcp").splitlines():
        host, _, port = line.strip().rpartition(":")
        if host == gateway and port.isdigit():
            return int(port)
    msg = f"port {CONTAINER_PORT} of {container} is not published on {gateway}"
    raise RuntimeError(msg)


_READY_PROBE = """\
import socket, ssl, sys
context = ssl.create_default_context(cafile=sys.argv[1])
with socket.create_connection(("127.0.0.1", int(sys.argv[3])), timeout=2) as raw:
    with context.wrap_socket(raw, server_hostname=sys.argv[2]) as tls:
        tls.sendall(b"GET /healthz HTTP/1.1\\r\\nhost: probe\\r\\nconnection: close\\r\\n\\r\\n")
        sys.exit(0 if tls.recv(64).startswith(b"HTTP/1.1 200") else 1)
"""


def _wait_ready(container: str, gateway: str) -> None:
    """Until the provider answers /healthz over TLS inside its container, verifying the
    certificate for ``gateway`` against the test CA."""
    deadline = time.monotonic() + READY_TIMEOUT
    ca = f"{MOUNT}/ca.pem"
    while time.monotonic() < deadline:
        state = docker("inspect", "-f", "{{.State.Running}}", container)
        if state != "true":
            logs = subprocess.run(
                ["docker", "logs", container], capture_output=True, text=True, check=False
            )
            msg = f"the outside provider exited:\n{logs.stdout}{logs.stderr}"
            raise RuntimeError(msg)
        command = ["docker", "exec", container, "python3", "-c", _READY_PROBE]
        probe = subprocess.run(
            [*command, ca, gateway, str(CONTAINER_PORT)],
            capture_output=True,
            check=False,
            timeout=30,
        )
        if probe.returncode == 0:
            return
        time.sleep(0.2)
    msg = f"the outside provider was not ready after {READY_TIMEOUT} s"
    raise RuntimeError(msg)


def _script_arguments(scripts: Path | Mapping[str, Path], mount: Path) -> list[str]:
    """Copy the scripts into ``mount``; the provider's ``--script`` arguments."""
    if isinstance(scripts, Path):
        target = mount / "scripts" / "default.json"
        target.write_bytes(scripts.read_bytes())
        target.chmod(0o644)
        return ["--script", f"{MOUNT}/scripts/default.json"]
    if not scripts:
        msg = "outside_provider needs at least one script"
        raise ValueError(msg)
    arguments = []
    for name, path in scripts.items():
        target = mount / "scripts" / f"{name}.json"
        target.write_bytes(path.read_bytes())
        target.chmod(0o644)
        arguments += ["--script", f"{name}={MOUNT}/scripts/{name}.json"]
    return arguments


@contextlib.contextmanager
def outside_provider(
    scripts: Path | Mapping[str, Path],
    workdir: Path,
    *,
    image: str | None = None,
    key: str | None = None,
) -> Iterator[OutsideProvider]:
    """Run the scripted provider as an outside provider; see the module docstring.

    ``scripts`` is one script file (answering ``POST <url>/responses``) or a mapping of
    name to file (each answering ``POST <url_for(name)>/responses``). ``workdir`` gets
    the CA, the certificate and the mounted files. The image defaults to
    ``hpbench-provider:${HPBENCH_IMAGE_TAG:-local}``, the key to a fresh :func:`fake_key`.
    """
    suffix = secrets.token_hex(4)
    network = f"hpbench-outside-{suffix}"
    key = key or fake_key()
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    container = ""
    network_made = False
    try:
        docker("network", "create", "--driver", "bridge", "--label", LABEL, network)
        network_made = True
        gateway = _gateway(network)
        ca = make_ca(workdir / "ca")
        server = make_server_cert(ca, workdir / "server", ips=[gateway])
        mount = workdir / "mount"
        (mount / "scripts").mkdir(parents=True)
        for source, name in ((ca.cert, "ca.pem"), (server.cert, "server.pem")):
            (mount / name).write_bytes(source.read_bytes())
        # The container's unprivileged user must read the throwaway key.
        (mount / "server-key.pem").write_bytes(server.key.read_bytes())
        arguments = _script_arguments(scripts, mount)
        for path in [mount, mount / "scripts", *mount.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        container = docker(
            "run",
            "-d",
            "--name",
            f"hpbench-outside-provider-{suffix}",
            "--label",
            LABEL,
            "--init",
            "--network",
            network,
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges:true",
            "-p",
            f"{gateway}::{CONTAINER_PORT}",
            "-v",
            f"{mount}:{MOUNT}:ro",
            "-e",
            KEY_ENV,  # the value comes from this process's environment, not the command line
            "--entrypoint",
            "python3",
            image or provider_image(),
            "-m",
            "hpbench.reference.provider",
            "--listen",
            f"0.0.0.0:{CONTAINER_PORT}",
            "--tls-cert",
            f"{MOUNT}/server.pem",
            "--tls-key",
            f"{MOUNT}/server-key.pem",
            "--api-key-env",
            KEY_ENV,
            "--record",
            "/records/provider.jsonl",
            *arguments,
            env={KEY_ENV: key},
        )
        _wait_ready(container, gateway)
        port = _published_port(container, gateway)
        names = ("default",) if isinstance(scripts, Path) else tuple(sorted(scripts))
        yield OutsideProvider(
            url=f"https://{gateway}:{port}/v1",
            ca_bundle=ca.cert,
            key=key,
            container=container,
            network=network,
            gateway=gateway,
            port=port,
            scripts=names,
            workdir=workdir,
        )
    finally:
        if container:
            subprocess.run(
                ["docker", "rm", "-f", "-v", container], capture_output=True, check=False
            )
        if network_made:
            subprocess.run(["docker", "network", "rm", network], capture_output=True, check=False)


def leftovers() -> list[str]:
    """Containers and networks any :func:`outside_provider` left behind (should be none)."""
    left = []
    for kind in (["ps", "-aq"], ["network", "ls", "-q"]):
        found = docker(*kind, "--filter", f"label={LABEL}").split()
        left += [f"{kind[0]} {item}" for item in found]
    return left
