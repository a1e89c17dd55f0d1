"""Global logging set-up: the only place that calls ``structlog.configure``.

Events go to stderr through the shared console (plain lines when stderr is not
a terminal) and, when a log file is given, as JSON lines to that file: the run
directory keeps a machine-readable log while people read short lines.
"""

from __future__ import annotations

import logging
from pathlib import Path

import structlog

from hpbench._console import err_console

_SHARED_PROCESSORS: list[structlog.types.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


class _ConsoleHandler(logging.Handler):
    """Writes through rich so log lines never tear a progress bar."""

    def emit(self, record: logging.LogRecord) -> None:
        err_console.print(self.format(record), markup=False, highlight=False, soft_wrap=True)


def _formatter(renderer: structlog.types.Processor) -> logging.Formatter:
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_SHARED_PROCESSORS,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )


def configure(level: str = "warning", log_file: Path | None = None) -> None:
    """Configure structlog and stdlib logging once for this process."""
    structlog.configure(
        processors=[*_SHARED_PROCESSORS, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    console_handler = _ConsoleHandler()
    console_handler.setLevel(level.upper())
    console_handler.setFormatter(
        _formatter(structlog.dev.ConsoleRenderer(colors=err_console.is_terminal))
    )
    handlers: list[logging.Handler] = [console_handler]
    if log_file is not None:
        file_handler = logging.FileHandler(log_file, encoding="utf-8")
        file_handler.setLevel(logging.DEBUG)
        file_handler.setFormatter(_formatter(structlog.processors.JSONRenderer(sort_keys=True)))
        handlers.append(file_handler)
    logging.basicConfig(level=logging.DEBUG, handlers=handlers, force=True)
