"""The stock base instructions the pinned Codex CLI really sends.

Codex sends its base instructions as the first ``developer`` *message* of a
request's ``input`` (an ``additional_tools`` item with the developer role may
come before it; it is not a message). The stock artifact keeps that text
verbatim together with its SHA-256, the CLI version and the model it came
from, because each pair has its own text.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from hpbench import schemagen
from hpbench._documents import document_json, read_document
from hpbench._jsonio import write_atomic
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.schemagen import doc

STOCK_TEXT_NAME = "stock.md"
STOCK_META_NAME = "stock.json"
STOCK_SCHEMA: Final = "hpbench.instructions.stock.v1"


def sha256_text(text: str) -> str:
    """Hex SHA-256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@attrs.frozen
class StockMeta:
    """What ``stock.json`` records about a captured stock text (``stock.md`` beside it)."""

    schema: Literal["hpbench.instructions.stock.v1"] = attrs.field(
        metadata=doc("Always `hpbench.instructions.stock.v1`.")
    )
    codex_version: str = attrs.field(metadata=doc("The Codex CLI that sends this text."))
    model: str = attrs.field(metadata=doc("The model it is sent for."))
    sha256: str = attrs.field(metadata=doc("Hex SHA-256 of `stock.md`, exactly."))
    source: str = attrs.field(
        metadata=doc("Where the text was taken from (a request body or the bundled catalog).")
    )


CONTRACT = schemagen.Contract(schema_file=f"{STOCK_SCHEMA}.schema.json", roots=(StockMeta,))


@attrs.frozen
class StockInstructions:
    """A captured stock text and where it came from."""

    text: str
    codex_version: str
    model: str

    @property
    def sha256(self) -> str:
        """Digest of the exact text."""
        return sha256_text(self.text)


def first_developer_text(request: dict[str, Any], *, source: str) -> str:
    """The text of the first developer message in a Responses request body.

    Raises:
        ContractError: no developer message, or one whose content is not
            exactly one ``input_text`` part.
    """
    items = request.get("input")
    if not isinstance(items, list):
        finding = Finding("stock.request", "the request has no input list", source, "$.input")
        raise ContractError(f"{source}: not a Responses request", [finding])
    for index, item in enumerate(items):
        if not (
            isinstance(item, dict)
            and item.get("type") == "message"
            and item.get("role") == "developer"
        ):
            continue
        content = item.get("content")
        parts = content if isinstance(content, list) else []
        texts = [
            p.get("text") for p in parts if isinstance(p, dict) and p.get("type") == "input_text"
        ]
        if len(parts) != 1 or len(texts) != 1 or not isinstance(texts[0], str):
            finding = Finding(
                "stock.developer_message",
                f"expected exactly one input_text part, found {len(parts)} part(s)",
                source,
                f"$.input[{index}].content",
            )
            raise ContractError(f"{source}: cannot read the base instructions", [finding])
        return texts[0]
    finding = Finding("stock.developer_message", "no developer message in input", source, "$.input")
    raise ContractError(f"{source}: cannot read the base instructions", [finding])


def extract_stock(request_path: Path, codex_version: str, model: str) -> StockInstructions:
    """Read the stock text from a recorded request body, checking the model it asked for."""
    source = str(request_path)
    try:
        request = json.loads(request_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        finding = Finding("stock.request", f"not a JSON request body: {exc}", source)
        raise ContractError(f"{source}: cannot read", [finding]) from None
    if not isinstance(request, dict):
        finding = Finding("stock.request", "not a JSON object", source, "$")
        raise ContractError(f"{source}: not a Responses request", [finding])
    if request.get("model") != model:
        finding = Finding(
            "stock.model",
            f"the request asked for model {request.get('model')!r}, expected {model!r}",
            source,
            "$.model",
        )
        raise ContractError(f"{source}: captured for another model", [finding])
    return StockInstructions(first_developer_text(request, source=source), codex_version, model)


def write_stock(stock: StockInstructions, directory: Path, *, source: str) -> None:
    """Keep the stock text and its metadata (``stock.md`` and ``stock.json``)."""
    write_atomic(directory / STOCK_TEXT_NAME, stock.text)
    meta = StockMeta(STOCK_SCHEMA, stock.codex_version, stock.model, stock.sha256, source)
    write_atomic(directory / STOCK_META_NAME, json.dumps(document_json(meta), indent=2) + "\n")


def read_stock(directory: Path) -> StockInstructions:
    """Load a kept stock artifact, proving the text still has its recorded digest."""
    meta_path = directory / STOCK_META_NAME
    source = str(meta_path)
    try:
        data = json.loads(meta_path.read_text(encoding="utf-8"))
        text = (directory / STOCK_TEXT_NAME).read_text(encoding="utf-8")
    except (OSError, json.JSONDecodeError) as exc:
        finding = Finding("stock.artifact", f"cannot read the stock artifact: {exc}", source)
        raise ContractError(f"{directory}: no stock artifact", [finding]) from None
    # The schema is a constant of the model: another one is refused here, by field.
    meta = read_document(data, StockMeta, source=source, code="stock.schema")
    findings = []
    if sha256_text(text) != meta.sha256:
        findings.append(
            Finding(
                "stock.digest",
                f"{STOCK_TEXT_NAME} does not have the recorded SHA-256",
                source,
                "$.sha256",
            )
        )
    if findings:
        raise ContractError(f"{directory}: stock artifact is not intact", findings)
    return StockInstructions(text, meta.codex_version, meta.model)


def bundled_stock(catalog_path: Path, codex_version: str, model: str) -> StockInstructions:
    """The stock text the pinned CLI embeds for ``model`` (``codex debug models --bundled``).

    The CLI sends exactly this text as its first developer message for slugs
    whose instructions do not depend on configuration (gpt-6-astra is one); the
    provider's request records prove it per request (``check-records``).

    Raises:
        ContractError: unreadable catalog, no such model, or no instructions.
    """
    source = str(catalog_path)
    try:
        catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        finding = Finding("stock.catalog", f"not a model catalog: {exc}", source)
        raise ContractError(f"{source}: cannot read", [finding]) from None
    models = catalog.get("models") if isinstance(catalog, dict) else None
    if not isinstance(models, list):
        finding = Finding("stock.catalog", "no models list", source, "$.models")
        raise ContractError(f"{source}: not a model catalog", [finding])
    for index, entry in enumerate(models):
        if isinstance(entry, dict) and entry.get("slug") == model:
            text = entry.get("base_instructions")
            if not isinstance(text, str) or not text:
                finding = Finding(
                    "stock.catalog",
                    f"model {model!r} has no base_instructions",
                    source,
                    f"$.models[{index}].base_instructions",
                )
                raise ContractError(f"{source}: no stock text", [finding])
            return StockInstructions(text, codex_version, model)
    finding = Finding("stock.model", f"the catalog has no model {model!r}", source, "$.models")
    raise ContractError(f"{source}: no stock text", [finding])
