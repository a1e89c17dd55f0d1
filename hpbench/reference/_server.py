"""Listening, the per-connection request loop and the shared command-line pieces.

The provider and the router are both one asyncio listener that reads requests
off each connection and hands them to a handler until either side ends the
connection. That loop, the ``--listen``/``--log-level`` options and running
until SIGTERM are written once here; each program supplies only its handler.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import ssl
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import structlog

from hpbench.reference._http import (
    MAX_LINE,
    HttpProtocolError,
    IncompleteBodyError,
    Request,
    close_writer,
    read_request,
)

TLS_HANDSHAKE_TIMEOUT = 10.0
TLS_SHUTDOWN_TIMEOUT = 2.0

Handler = Callable[[Request, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]
"""Answers one request; returns whether the connection may carry another."""


def add_listener_arguments(parser: argparse.ArgumentParser) -> None:
    """``--listen HOST:PORT`` (required) and ``--log-level``."""
    parser.add_argument("--listen", required=True, metavar="HOST:PORT")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])


def parse_listen(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) to a host and a port."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host:
        msg = f"--listen wants HOST:PORT, got {address!r}"
        raise ValueError(msg)
    return host.strip("[]"), int(port)


async def serve_connection(
    handle: Handler,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    log: structlog.stdlib.BoundLogger,
) -> None:
    """Serve requests on one client connection until either side ends it."""
    try:
        while True:
            request = await read_request(reader)
            if request is None:
                break
            if not await handle(request, reader, writer):
                break
    except (HttpProtocolError, IncompleteBodyError) as exc:
        log.warning("bad client request", error=str(exc))
    except (ConnectionError, OSError):
        pass
    except Exception:
        log.exception("internal error; connection closed")
    finally:
        if not writer.is_closing():
            await close_writer(writer)


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    """A server TLS context (TLS 1.2 or later) from a PEM certificate chain and its key.

    Raises :class:`ValueError` naming the file when either cannot be loaded.
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(certfile=cert, keyfile=key)
    except FileNotFoundError as exc:
        msg = f"TLS file not found: {exc.filename or cert}"
        raise ValueError(msg) from exc
    except (ssl.SSLError, OSError) as exc:
        msg = f"cannot load the TLS certificate {cert} with key {key}: {exc}"
        raise ValueError(msg) from exc
    return context


async def serve(
    handle: Handler,
    host: str,
    port: int,
    *,
    log: structlog.stdlib.BoundLogger,
    tls: ssl.SSLContext | None = None,
    **describe: Any,
) -> None:
    """Listen until cancelled (HTTPS when ``tls`` is given); ``describe`` goes into the
    ``listening`` log line."""
    server = await asyncio.start_server(
        lambda r, w: serve_connection(handle, r, w, log),
        host,
        port,
        limit=MAX_LINE,
        ssl=tls,
        ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT if tls is not None else None,
        # A client that never answers close_notify must not hold a SIGTERM for 30 s.
        ssl_shutdown_timeout=TLS_SHUTDOWN_TIMEOUT if tls is not None else None,
    )
    bound = ", ".join(str(sock.getsockname()) for sock in server.sockets)
    log.info("listening", address=bound, scheme="https" if tls else "http", **describe)
    async with server:
        await server.serve_forever()


def run_until_signal(
    main_coroutine: Coroutine[Any, Any, None],
    name: str,
    *,
    on_stop: Callable[[], Awaitable[None]] | None = None,
) -> int:
    """Run a server coroutine until SIGTERM or SIGINT, then ``on_stop`` (work that must
    finish before the process exits); 1 when it cannot listen."""

    async def runner() -> None:
        task = asyncio.ensure_future(main_coroutine)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task
        if on_stop is not None:
            await on_stop()

    try:
        asyncio.run(runner())
    except OSError as exc:
        sys.stderr.write(f"{name}: cannot listen: {exc}\n")
        return 1
    return 0
