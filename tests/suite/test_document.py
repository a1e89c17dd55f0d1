"""suite.json's contract: every model refuses an unknown key and a wrong type, naming the
field; the written document reads back through the model; its schema is generated."""

from __future__ import annotations

import copy
import inspect
import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from hpbench._documents import read_document
from hpbench.errors import ContractError
from hpbench.rundir import SuiteLayout
from hpbench.schemagen import SCHEMA_DIR, render_schema
from hpbench.stats import RateInterval
from hpbench.suite import document as contract
from hpbench.suite import finish_suite
from hpbench.suite.document import SuiteDocument

from ..conftest import REPO_ROOT
from .conftest import task_report, tokens, write_request


class Key(str):
    """A step into a map keyed by an arm or a label (the converter writes it ``['key']``)."""

    __slots__ = ()


# Where each model of the contract sits in a finished suite's suite.json.
PLACES: dict[type[Any], tuple[str | int, ...]] = {
    contract.SuiteDocument: (),
    contract.TaskRow: ("tasks", 0),
    contract.TaskFigures: ("tasks", 0, "figures"),
    contract.ArmTally: ("tasks", 0, "figures", "arms", Key("control")),
    contract.Discordance: ("tasks", 0, "figures", "discordance"),
    contract.TaskMcNemar: ("tasks", 0, "figures", "mcnemar"),
    contract.TokenFigure: ("tasks", 0, "figures", "tokens", Key("input_tokens")),
    contract.Pooled: ("pooled",),
    contract.PooledArm: ("pooled", "arms", Key("hpatch")),
    RateInterval: ("pooled", "arms", Key("hpatch"), "pass_rate"),
    contract.Stratum: ("pooled", "strata", 1),
    contract.PooledMcNemar: ("pooled", "mcnemar"),
    contract.CrossTaskTokens: ("pooled", "tokens", Key("output_tokens")),
    contract.SuiteOutcome: ("outcome",),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """suite.json of two reported tasks, as hpbench suite finish writes it."""
    tmp = tmp_path_factory.mktemp("document")
    root = tmp / "suite"
    write_request(root, ["a", "b"], ["a\t0", "b\t0"])
    task_report(root, "a", [(True, True), (True, False)], [tokens(10, 9)] * 2, tmp / "s-a")
    task_report(root, "b", [(False, True), (True, True)], [tokens(20, 30)] * 2, tmp / "s-b")
    finish_suite(root)
    data: dict[str, Any] = json.loads(SuiteLayout(root).suite_json.read_text())
    return data


def _at(data: Any, place: tuple[str | int, ...]) -> Any:
    for step in place:
        data = data[step]
    return data


def _step(step: str | int) -> str:
    if isinstance(step, Key):
        return f"[{str(step)!r}]"
    return f"[{step}]" if isinstance(step, int) else f".{step}"


def _path(place: tuple[str | int, ...]) -> str:
    return "$" + "".join(_step(step) for step in place)


def _refused(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        read_document(data, SuiteDocument, source="suite.json", code="suite.document")
    return [(f.field or "", f.message) for f in caught.value.findings]


def test_every_model_of_the_contract_is_placed() -> None:
    """A model added to the contract without a place here fails, so none goes untested."""
    models = {
        cls
        for _, cls in inspect.getmembers(contract, inspect.isclass)
        if attrs.has(cls) and cls.__module__ == contract.__name__
    }
    assert models <= set(PLACES)


def test_written_document_reads_back(written: dict[str, Any]) -> None:
    document = read_document(written, SuiteDocument, source="suite.json", code="suite.document")
    assert ("a", "b") == tuple(row.task for row in document.tasks)


@pytest.mark.parametrize("model", list(PLACES), ids=lambda cls: cls.__name__)
def test_unknown_key_is_refused_by_field(written: dict[str, Any], model: type[Any]) -> None:
    data = copy.deepcopy(written)
    place = PLACES[model]
    target = _at(data, place)
    assert {field.name for field in attrs.fields(model)} == set(target)
    target["surplus"] = 1
    assert [(_path(place), "unknown field(s): surplus")] == _refused(data)


@pytest.mark.parametrize("model", list(PLACES), ids=lambda cls: cls.__name__)
def test_missing_key_is_refused_by_field(written: dict[str, Any], model: type[Any]) -> None:
    data = copy.deepcopy(written)
    place = PLACES[model]
    name = attrs.fields(model)[0].name
    del _at(data, place)[name]
    assert [(f"{_path(place)}.{name}", "required field missing")] == _refused(data)


@pytest.mark.parametrize(
    ("place", "value", "message"),
    [
        (("tasks", 0, "figures", "arms", Key("control"), "passed"), "1", "expected an integer"),
        (("tasks", 0, "status"), "maybe", "maybe not in literal"),
        (("pooled", "mcnemar", "p_value"), None, "expected a number"),
        (
            ("tasks", 1, "figures", "tokens", Key("input_tokens"), "interval"),
            "wide",
            "wide not in literal",
        ),
        (("schema",), "hpbench.suite.v0", "hpbench.suite.v0"),
        (("interrupted",), 0, "expected true or false"),
    ],
)
def test_wrong_value_is_refused_by_field(
    written: dict[str, Any], place: tuple[str | int, ...], value: Any, message: str
) -> None:
    data = copy.deepcopy(written)
    _at(data, place[:-1])[place[-1]] = value
    [(field, text)] = _refused(data)
    assert _path(place) == field
    assert message in text


def test_schema_is_generated() -> None:
    """contrib/schemas holds the schema the model generates (hpbench schemas --write)."""
    path = REPO_ROOT / SCHEMA_DIR / contract.SCHEMA_FILE
    assert render_schema(contract.CONTRACT) == path.read_text()
    schema = json.loads(path.read_text())
    assert schema["additionalProperties"] is False


def test_refused_document_names_the_source(tmp_path: Path) -> None:
    with pytest.raises(ContractError) as caught:
        read_document([], SuiteDocument, source=str(tmp_path / "suite.json"), code="suite.document")
    assert str(tmp_path / "suite.json") == caught.value.findings[0].file
