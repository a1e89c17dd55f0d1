"""Local codec replay: a token-blind, seeded freeze of exact rollout bytes, and a replay that
reads only the frozen corpus, refuses missing or changed samples, and never prints content.

Synthetic rollouts validate these mechanics, not compression efficiency.
"""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

import hpbench
from hpbench._cli.main import main
from hpbench._documents import document_json
from hpbench._jsonio import canonical_json
from hpbench.codecreplay import (
    REFERENCE_CTP2,
    Codec,
    CorpusManifest,
    freeze,
    read_manifest,
    replay,
)
from hpbench.codecreplay.freeze import rollout_key, session_key
from hpbench.codecreplay.manifest import CORPUS_SCHEMA
from hpbench.codecreplay.rollout import (
    ROLLOUT_ONLY_KEYS,
    IneligibleError,
    parse_rollout,
    request_inputs,
)
from hpbench.codexconfig import CodexConfig, write_config
from hpbench.errors import ContractError
from hpbench.reference.harness import codex_exec, running_provider, running_router
from hpbench.rundir import Arm

SECRET = "zebra-quartz-7731 private words"  # noqa: S105 - conversation text, no credential
SEED = 20261204
SESSIONS = tuple(f"0199aaaa-0000-7000-8000-{n:012d}" for n in range(8))


def _user(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
        "internal_chat_message_metadata_passthrough": {"turn_id": "t1"},
    }


def _items() -> list[dict[str, Any]]:
    """A user turn with two tool rounds and a final answer; every text holds the secret."""
    return [
        _user(f"Please fix the parser. {SECRET}"),
        {"type": "reasoning", "id": "rs_1", "summary": [], "content": None},
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": f"{SECRET}\n" * 12},
        {"type": "function_call", "call_id": "c2", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": f"{SECRET} ok"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": SECRET}],
        },
    ]


def _lines(session_id: str, tokens: int) -> list[dict[str, Any]]:
    meta = {"id": session_id, "session_id": session_id, "cli_version": "0.169.0"}
    lines: list[dict[str, Any]] = [
        {"timestamp": "2026-12-04T10:00:00Z", "type": "session_meta", "payload": meta}
    ]
    for number, item in enumerate(_items()):
        lines.append(
            {"timestamp": "2026-12-04T10:00:01Z", "type": "response_item", "payload": item}
        )
        usage = {"input_tokens": tokens * (number + 1), "output_tokens": tokens // 3}
        lines.append(
            {
                "timestamp": "2026-12-04T10:00:02Z",
                "type": "event_msg",
                "payload": {"type": "token_count", "info": {"total_token_usage": usage}},
            }
        )
        lines.append({"timestamp": "t", "type": "token_usage_record", "payload": {"usage": usage}})
    return lines


def _write(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line) + "\n" if not isinstance(line, str) else line for line in lines)
    path.write_bytes(text.encode("utf-8"))
    return path


def _name(day: int, session_id: str, minute: int = 0) -> str:
    return f"2026/12/{day:02d}/rollout-2026-12-{day:02d}T10-{minute:02d}-00-{session_id}.jsonl"


def _corpus(root: Path, tokens: dict[tuple[str, int], int]) -> Path:
    """A sessions directory: every session once, the first three twice more (resumed)."""
    for number, session_id in enumerate(SESSIONS):
        rollouts = 3 if number < 3 else 1
        for copy in range(rollouts):
            _write(
                root / _name(1 + number, session_id, copy),
                _lines(session_id, tokens[(session_id, copy)]),
            )
    return root


def _tokens(rising: bool) -> dict[tuple[str, int], int]:
    keys = [(s, copy) for s in SESSIONS for copy in range(3)]
    counts = range(100, 100 + 977 * len(keys), 977)
    return dict(zip(keys, counts if rising else reversed(counts), strict=True))


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """A sessions directory of eight sessions, three of them with three rollouts."""
    return _corpus(tmp_path / "sessions", _tokens(rising=True))


def _identities(manifest: CorpusManifest) -> list[tuple[int, str, str, int]]:
    return [(s.order, s.session_id, s.rollout, s.rollout_candidates) for s in manifest.samples]


class TestSelection:
    def test_order_and_rollouts_ignore_token_counts(self, tmp_path):
        """Two corpora equal but for every token count freeze the same rollouts in one order."""
        low = _corpus(tmp_path / "a", _tokens(rising=True))
        high = _corpus(tmp_path / "b", _tokens(rising=False))

        first = freeze(low, tmp_path / "out-a", SEED, 5).manifest
        second = freeze(high, tmp_path / "out-b", SEED, 5).manifest

        assert _identities(first) == _identities(second)
        assert [s.sha256 for s in first.samples] != [s.sha256 for s in second.samples]
        # A rule that looked at tokens would have told them apart: the ranking is reversed.
        rising, falling = _tokens(rising=True), _tokens(rising=False)
        assert max(rising, key=rising.__getitem__) != max(falling, key=falling.__getitem__)

    def test_order_is_the_seeded_hash_of_the_session_id(self, sessions, tmp_path):
        """Sessions come in the order of their seeded key, the first SIZE of the population."""
        manifest = freeze(sessions, tmp_path / "out", SEED, 5).manifest

        expected = sorted(SESSIONS, key=lambda s: session_key(SEED, s))[:5]
        assert expected == [s.session_id for s in manifest.samples]
        assert [1, 2, 3, 4, 5] == [s.order for s in manifest.samples]
        assert (len(SESSIONS), SEED) == (manifest.population, manifest.seed)

    def test_another_seed_gives_another_order(self, sessions, tmp_path):
        """The seed is the only thing besides the ids that moves the order."""
        one = freeze(sessions, tmp_path / "one", SEED, len(SESSIONS)).manifest
        other = freeze(sessions, tmp_path / "other", SEED + 1, len(SESSIONS)).manifest

        assert [s.session_id for s in one.samples] != [s.session_id for s in other.samples]
        assert sorted(s.session_id for s in one.samples) == sorted(SESSIONS)

    def test_one_rollout_per_session_by_the_documented_rule(self, sessions, tmp_path):
        """A resumed session contributes one rollout: the smallest seeded hash of its path."""
        manifest = freeze(sessions, tmp_path / "out", SEED, len(SESSIONS)).manifest

        for sample in manifest.samples:
            number = SESSIONS.index(sample.session_id)
            candidates = [
                _name(1 + number, sample.session_id, c) for c in range(3 if number < 3 else 1)
            ]
            assert min(candidates, key=lambda r: rollout_key(SEED, r)) == sample.rollout
            assert len(candidates) == sample.rollout_candidates
        assert (3 * 3 + 5, len(SESSIONS)) == (manifest.eligible_rollouts, manifest.population)
        assert "smallest SHA-256" in manifest.rollout_selection

    def test_a_size_beyond_the_population_takes_it_all(self, sessions, tmp_path):
        """Asking for more than there is selects every session and records both numbers."""
        manifest = freeze(sessions, tmp_path / "out", SEED, 50).manifest

        assert (50, len(SESSIONS), len(SESSIONS)) == (
            manifest.requested_size,
            manifest.population,
            len(manifest.samples),
        )

    def test_the_manifest_records_the_rules(self, sessions, tmp_path):
        """Eligibility criteria, selection algorithm, rollout rule and request rule are kept."""
        manifest = freeze(sessions, tmp_path / "out", SEED, 2).manifest

        codes = [criterion.partition(":")[0] for criterion in manifest.eligibility]
        assert [
            "not-a-regular-file",
            "unreadable",
            "malformed-jsonl",
            "no-session-meta",
            "no-user-message",
            "no-model-output",
        ] == codes
        assert "never read" in manifest.selection
        assert str(SEED) not in manifest.selection  # the rule, not this run's values
        assert "prefix" in manifest.request_rule
        assert str(sessions.resolve()) == manifest.sessions_dir


class TestEligibility:
    def test_ineligible_files_are_excluded_and_counted(self, sessions, tmp_path):
        """Each broken file is left out and counted under the criterion it fails."""
        meta = {"type": "session_meta", "payload": {"id": "broken"}}
        user = {"type": "response_item", "payload": _user("hi")}
        answer = {"type": "response_item", "payload": _items()[-1]}
        _write(sessions / _name(20, "bad-json"), [meta, user, "{not json\n", answer])
        _write(sessions / _name(20, "no-meta"), [user, answer])
        _write(sessions / _name(20, "empty-id"), [{**meta, "payload": {"id": ""}}, user, answer])
        _write(sessions / _name(20, "no-user"), [meta, answer])
        _write(sessions / _name(20, "no-output"), [meta, user])
        _write(sessions / _name(20, "not-object"), [meta, user, "[1, 2]\n", answer])
        (sessions / _name(21, "latin1")).parent.mkdir(parents=True)
        (sessions / _name(21, "latin1")).write_bytes(b'{"type": "x", "payload": "\xe9"}\n')
        (sessions / _name(21, "linked")).symlink_to(sessions / _name(1, SESSIONS[0]))
        _write(sessions / "2026/12/21/notes.jsonl", [meta, user, answer])

        manifest = freeze(sessions, tmp_path / "out", SEED, 50).manifest

        assert {
            "malformed-jsonl": 3,
            "no-session-meta": 2,
            "no-user-message": 1,
            "no-model-output": 1,
            "not-a-regular-file": 1,
        } == manifest.ineligible
        assert (14 + 8, 14, len(SESSIONS)) == (
            manifest.files_scanned,
            manifest.eligible_rollouts,
            manifest.population,
        )
        assert "broken" not in {s.session_id for s in manifest.samples}

    def test_parse_refuses_each_criterion_by_its_code(self):
        """The reader names the first criterion a rollout fails."""
        meta = json.dumps({"type": "session_meta", "payload": {"id": "s"}}) + "\n"
        user = json.dumps({"type": "response_item", "payload": _user("hi")}) + "\n"
        bad_item = json.dumps({"type": "response_item", "payload": "text"}) + "\n"
        no_payload = json.dumps({"type": "session_meta"}) + "\n"
        cases = {
            b"\xff\xfe": "malformed-jsonl",
            (meta + bad_item).encode(): "malformed-jsonl",
            no_payload.encode(): "malformed-jsonl",
            user.encode(): "no-session-meta",
            meta.encode(): "no-user-message",
            (meta + user).encode(): "no-model-output",
        }
        for data, reason in cases.items():
            with pytest.raises(IneligibleError) as caught:
                parse_rollout(data)
            assert reason == caught.value.reason, data

    def test_nothing_eligible_is_refused(self, tmp_path):
        """A directory without one eligible rollout freezes nothing and says how many it saw."""
        _write(tmp_path / "s" / _name(1, "x"), ["{nope\n"])

        with pytest.raises(ContractError, match="none of the 1 rollout files is eligible"):
            freeze(tmp_path / "s", tmp_path / "out", SEED, 3)
        assert not (tmp_path / "out").exists()


class TestFreezeDestination:
    def test_frozen_bytes_and_identities_round_trip(self, sessions, tmp_path):
        """Each sample is its rollout's exact bytes; the manifest reads back as written."""
        dest = tmp_path / "corpus"
        frozen = freeze(sessions, dest, SEED, 4)

        read = read_manifest(dest / "manifest.json")
        assert frozen.manifest == read.manifest
        assert hashlib.sha256((dest / "manifest.json").read_bytes()).hexdigest() == read.sha256
        assert frozen.sha256 == read.sha256
        for sample in read.manifest.samples:
            kept = (dest / "samples" / f"{sample.order}.jsonl").read_bytes()
            assert (sessions / sample.rollout).read_bytes() == kept
            assert (sample.bytes, sample.sha256) == (len(kept), hashlib.sha256(kept).hexdigest())
        assert CORPUS_SCHEMA == json.loads((dest / "manifest.json").read_text())["schema"]

    def test_the_corpus_is_private(self, sessions, tmp_path):
        """The destination and its samples directory are 0700, every file 0600."""
        dest = tmp_path / "corpus"
        freeze(sessions, dest, SEED, 2)

        modes = {
            path.relative_to(dest).as_posix(): stat.S_IMODE(path.stat().st_mode)
            for path in [dest, *dest.rglob("*")]
        }
        assert {
            ".": 0o700,
            "samples": 0o700,
            "samples/1.jsonl": 0o600,
            "samples/2.jsonl": 0o600,
            "manifest.json": 0o600,
        } == modes

    def test_an_existing_empty_destination_is_refused(self, sessions, tmp_path):
        """Even an empty directory is never written into."""
        dest = tmp_path / "corpus"
        dest.mkdir()

        with pytest.raises(ContractError, match="the destination exists"):
            freeze(sessions, dest, SEED, 2)
        assert [] == list(dest.iterdir())

    def test_an_existing_corpus_is_never_overwritten(self, sessions, tmp_path):
        """A second freeze into the same place refuses and leaves the first one as it was."""
        dest = tmp_path / "corpus"
        freeze(sessions, dest, SEED, 2)
        before = {p: p.read_bytes() for p in dest.rglob("*") if p.is_file()}

        with pytest.raises(ContractError, match="the destination exists"):
            freeze(sessions, dest, SEED + 1, 5)
        assert before == {p: p.read_bytes() for p in dest.rglob("*") if p.is_file()}

    def test_a_file_or_symlink_at_the_destination_is_refused(self, sessions, tmp_path):
        """Whatever is at the destination, a freeze refuses it."""
        (tmp_path / "file").write_text("x")
        (tmp_path / "link").symlink_to(tmp_path / "nowhere")

        for dest in (tmp_path / "file", tmp_path / "link"):
            with pytest.raises(ContractError, match="the destination exists"):
                freeze(sessions, dest, SEED, 2)
        assert not (tmp_path / "nowhere").exists()

    def test_a_destination_inside_the_checkout_is_refused(self, sessions):
        """Private bytes never go into hpbench's own repository."""
        dest = Path(hpbench.__file__).resolve().parent.parent / "runs" / "codec-corpus-refused"

        with pytest.raises(ContractError, match="inside the repository"):
            freeze(sessions, dest, SEED, 2)
        assert not dest.exists()

    def test_a_destination_inside_the_current_work_tree_is_refused(
        self, sessions, tmp_path, monkeypatch
    ):
        """Nor into the git work tree the command runs in."""
        work = tmp_path / "work"
        subprocess.run(["git", "init", "-q", str(work)], check=True, capture_output=True)
        monkeypatch.chdir(work)

        with pytest.raises(ContractError, match="inside the repository"):
            freeze(sessions, Path("corpus"), SEED, 2)
        assert not (work / "corpus").exists()

    def test_a_size_below_one_is_refused(self, sessions, tmp_path):
        """A corpus of no sample is no corpus."""
        with pytest.raises(ContractError, match="the size must be at least 1, got 0"):
            freeze(sessions, tmp_path / "out", SEED, 0)
        assert not (tmp_path / "out").exists()

    def test_a_missing_sessions_directory_is_refused(self, tmp_path):
        """The sessions directory must be one."""
        with pytest.raises(ContractError, match="not a directory"):
            freeze(tmp_path / "absent", tmp_path / "out", SEED, 2)


@pytest.fixture
def corpus(sessions: Path, tmp_path: Path) -> Path:
    """A frozen corpus of four samples; returns its manifest."""
    return freeze(sessions, tmp_path / "corpus", SEED, 4).path


class TestReplayRefuses:
    def test_a_missing_sample(self, corpus):
        """A deleted sample refuses the replay, named by order and session."""
        session = read_manifest(corpus).manifest.samples[1].session_id
        (corpus.parent / "samples" / "2.jsonl").unlink()

        with pytest.raises(ContractError) as caught:
            replay(corpus)
        (finding,) = caught.value.findings
        assert f"sample 2 (session {session}): samples/2.jsonl is missing" == finding.message
        assert "$.samples[1]" == finding.field

    def test_an_altered_sample_of_the_same_length(self, corpus):
        """One byte changed, the length kept: the hash refuses it."""
        path = corpus.parent / "samples" / "3.jsonl"
        data = bytearray(path.read_bytes())
        data[-2] = ord("X") if data[-2] != ord("X") else ord("Y")
        path.write_bytes(bytes(data))
        session = read_manifest(corpus).manifest.samples[2].session_id

        with pytest.raises(ContractError) as caught:
            replay(corpus)
        (finding,) = caught.value.findings
        assert f"sample 3 (session {session})" in finding.message
        assert "the sample changed" in finding.message

    def test_a_sample_of_another_length(self, corpus):
        """Bytes appended are refused with both lengths."""
        path = corpus.parent / "samples" / "1.jsonl"
        size = path.stat().st_size
        with path.open("ab") as stream:
            stream.write(b"\n")

        with pytest.raises(
            ContractError, match=f"has {size + 1} bytes; the manifest records {size}"
        ):
            replay(corpus)

    def test_a_symlink_to_the_live_rollout(self, corpus, sessions):
        """Live history is never substituted, even with the very same bytes."""
        sample = read_manifest(corpus).manifest.samples[0]
        path = corpus.parent / "samples" / "1.jsonl"
        path.unlink()
        path.symlink_to(sessions / sample.rollout)

        with pytest.raises(ContractError, match=r"samples/1\.jsonl is not a regular file"):
            replay(corpus)

    def test_every_broken_sample_is_named(self, corpus):
        """Two broken samples give two findings; nothing is measured."""
        (corpus.parent / "samples" / "1.jsonl").unlink()
        (corpus.parent / "samples" / "4.jsonl").write_bytes(b"")

        with pytest.raises(ContractError) as caught:
            replay(corpus)
        assert ["$.samples[0]", "$.samples[3]"] == [f.field for f in caught.value.findings]


def _manifest_data(corpus: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(corpus.read_text())
    return data


def _refused(corpus: Path, data: dict[str, Any]) -> list[tuple[str | None, str]]:
    corpus.write_text(json.dumps(data))
    with pytest.raises(ContractError) as caught:
        read_manifest(corpus)
    return [(f.field, f.message) for f in caught.value.findings]


class TestStrictManifest:
    def test_an_unknown_key_is_refused_by_name(self, corpus):
        """A key the contract does not have is named."""
        data = {**_manifest_data(corpus), "token_counts": [1, 2]}

        assert [("$", "unknown field(s): token_counts")] == _refused(corpus, data)

    def test_an_unknown_key_in_a_sample_is_refused(self, corpus):
        """Samples are strict too."""
        data = _manifest_data(corpus)
        data["samples"][0]["path"] = "/home/me/.codex/sessions/x.jsonl"

        assert [("$.samples[0]", "unknown field(s): path")] == _refused(corpus, data)

    def test_a_wrong_type_is_refused_by_field(self, corpus):
        """No coercion: a string seed is refused at its path."""
        data = {**_manifest_data(corpus), "seed": "7"}

        assert [("$.seed", "expected an integer, got a string")] == _refused(corpus, data)

    def test_another_schema_is_refused(self, corpus):
        """A newer corpus schema is not read as this one."""
        data = {**_manifest_data(corpus), "schema": "hpbench.codec-corpus.v2"}

        ((field, _),) = _refused(corpus, data)
        assert "$.schema" == field

    def test_samples_out_of_order_are_refused(self, corpus):
        """Orders must run 1, 2, 3, … in the list's order."""
        data = _manifest_data(corpus)
        data["samples"][0]["order"], data["samples"][1]["order"] = 2, 1

        assert [
            ("$.samples[0].order", "sample 1 has order 2"),
            ("$.samples[1].order", "sample 2 has order 1"),
        ] == _refused(corpus, data)

    def test_a_session_selected_twice_is_refused(self, corpus):
        """One logical session contributes one sample."""
        data = _manifest_data(corpus)
        data["samples"][1]["session_id"] = data["samples"][0]["session_id"]

        session = data["samples"][0]["session_id"]
        assert [("$.samples[1].session_id", f"session {session} is selected twice")] == _refused(
            corpus, data
        )

    def test_a_digest_that_is_no_sha256_is_refused(self, corpus):
        """The content hash must be one."""
        data = _manifest_data(corpus)
        data["samples"][2]["sha256"] = "ABC"

        assert [("$.samples[2].sha256", "not a SHA-256 (64 lowercase hex digits)")] == _refused(
            corpus, data
        )

    def test_more_samples_than_the_population_are_refused(self, corpus):
        """The population bounds the samples."""
        data = {**_manifest_data(corpus), "population": 1}

        assert [("$.population", "4 samples from a population of fewer")] == _refused(corpus, data)

    def test_no_samples_and_negative_lengths_are_refused(self, corpus):
        """An empty corpus, and a sample of negative length, are no freeze's output."""
        data = _manifest_data(corpus)
        empty = {**data, "samples": []}
        assert [("$.samples", "no samples")] == _refused(corpus, empty)
        data["samples"][0]["bytes"] = -1
        assert [("$.samples[0].bytes", "a negative length (-1)")] == _refused(corpus, data)

    def test_a_manifest_that_is_not_json_is_refused(self, tmp_path):
        """Neither a missing file nor a non-JSON one is read as a manifest."""
        with pytest.raises(ContractError, match="cannot read the manifest"):
            read_manifest(tmp_path / "absent.json")
        (tmp_path / "m.json").write_text("{")
        with pytest.raises(ContractError, match="not JSON"):
            read_manifest(tmp_path / "m.json")


def _expected_bytes(prefixes: list[int], coded: bool) -> int:
    items = [{k: v for k, v in item.items() if k not in ROLLOUT_ONLY_KEYS} for item in _items()]
    total = 0
    for length in prefixes:
        request = items[:length]
        sent = REFERENCE_CTP2.compress(request) if coded else request
        total += len(canonical_json(sent).encode("utf-8"))
    return total


class TestReplayMeasures:
    def test_requests_are_the_prefixes_before_each_model_response(self):
        """A request ends before each run of model outputs that follows other items."""
        items = [{k: v for k, v in item.items() if k not in ROLLOUT_ONLY_KEYS} for item in _items()]

        assert [1, 4, 6] == [len(prefix) for prefix in request_inputs(items)]
        assert [] == list(request_inputs([_items()[-1], _user("late")]))

    def test_bytes_before_and_after_the_codec(self, corpus):
        """Each sample's bytes are its requests' compact JSON, before and after CTP/2."""
        result = replay(corpus)

        before, after = _expected_bytes([1, 4, 6], False), _expected_bytes([1, 4, 6], True)
        assert before > after  # the first tool output is answered and over the threshold
        for sample in result.samples:
            assert (3, before, after, before - after) == (
                sample.requests,
                sample.input_bytes,
                sample.coded_bytes,
                sample.saved_bytes,
            )
        assert (12, 4 * before, 4 * (before - after)) == (
            result.requests,
            result.input_bytes,
            result.saved_bytes,
        )

    def test_the_result_names_manifest_codec_and_scope(self, corpus):
        """The manifest's identity, the codec, and what the numbers are not."""
        result = replay(corpus)

        assert hashlib.sha256(corpus.read_bytes()).hexdigest() == result.manifest_sha256
        assert "reference CTP/2 codec (test equipment)" == result.codec
        assert "recorded eligible local population" in result.description
        assert (
            "not evidence of task success, latency, provider billing, or universal "
            "compression efficiency"
        ) in result.description

    def test_another_codec_plugs_in(self, corpus):
        """Any items-to-items callable is measured, under its own name, on bookkeeping-free
        items."""
        seen: list[list[Any]] = []

        def identity(items: list[Any]) -> list[Any]:
            seen.append(items)
            return items

        result = replay(corpus, Codec("identity", identity))

        assert ("identity", 0, 12) == (result.codec, result.saved_bytes, len(seen))
        assert not any(ROLLOUT_ONLY_KEYS & item.keys() for items in seen for item in items)


class TestNoContent:
    def test_no_conversation_text_in_any_output(self, sessions, tmp_path, capsys, monkeypatch):
        """Freeze, replay (text and JSON), the result, the manifest and a refusal hold no
        conversation text."""
        monkeypatch.delenv("HPBENCH_CODEC_MANIFEST", raising=False)
        dest = tmp_path / "corpus"
        manifest = dest / "manifest.json"
        freeze_args = ["--sessions", str(sessions), "--dest", str(dest), "--seed", str(SEED)]

        assert 0 == main(["codec", "freeze", *freeze_args, "--size", "3"])
        assert 0 == main(["codec", "replay", "--manifest", str(manifest)])
        assert 0 == main(["codec", "replay", "--manifest", str(manifest), "--json"])
        printed = capsys.readouterr()
        result = json.loads(printed.out.splitlines()[-1])
        document = json.dumps(document_json(replay(manifest)))
        first = dest / "samples" / "1.jsonl"
        first.write_bytes(b"x" * first.stat().st_size)
        assert 1 == main(["codec", "replay", "--manifest", str(manifest), "--json"])
        refused = capsys.readouterr()

        assert SECRET in (sessions / _name(1, SESSIONS[0])).read_text()
        outputs = (printed.out, printed.err, refused.out, refused.err, document)
        for text in (*outputs, manifest.read_text()):
            assert "zebra" not in text
            assert "parser" not in text
        assert (3, "reference CTP/2 codec (test equipment)") == (
            len(result["samples"]),
            result["codec"],
        )
        assert "sample 1 (session" in refused.err


class TestCli:
    def test_replay_without_a_manifest_skips(self, capsys, monkeypatch):
        """No --manifest and no HPBENCH_CODEC_MANIFEST: one skip line, exit 0."""
        monkeypatch.delenv("HPBENCH_CODEC_MANIFEST", raising=False)

        assert 0 == main(["codec", "replay"])
        assert "skipped: no frozen corpus manifest\n" == capsys.readouterr().out

    def test_replay_without_a_manifest_skips_in_json(self, capsys, monkeypatch):
        """The skip is machine-readable too."""
        monkeypatch.delenv("HPBENCH_CODEC_MANIFEST", raising=False)

        assert 0 == main(["codec", "replay", "--json"])
        assert {"ok": True, "skipped": "skipped: no frozen corpus manifest"} == json.loads(
            capsys.readouterr().out
        )

    def test_the_environment_names_the_manifest(self, corpus, capsys, monkeypatch):
        """HPBENCH_CODEC_MANIFEST stands in for --manifest."""
        monkeypatch.setenv("HPBENCH_CODEC_MANIFEST", str(corpus))

        assert 0 == main(["codec", "replay", "--json"])
        out = json.loads(capsys.readouterr().out)
        assert hashlib.sha256(corpus.read_bytes()).hexdigest() == out["manifest_sha256"]

    def test_freeze_refuses_an_existing_destination(self, sessions, tmp_path, capsys):
        """The CLI exits 1 naming the destination."""
        (tmp_path / "corpus").mkdir()
        args = ["--sessions", str(sessions), "--dest", str(tmp_path / "corpus")]

        assert 1 == main(["codec", "freeze", *args, "--seed", "1", "--size", "2"])
        assert "the destination exists" in capsys.readouterr().err


@pytest.mark.codex
class TestRealCodexRollout:
    def test_a_real_rollout_freezes_and_replays(self, tmp_path, replay_dir, capsys):
        """A Codex 0.169 session (scripted provider behind the reference router, on loopback)
        is eligible, freezes byte for byte, and replays one input per model request."""
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / "hello.txt").write_text("hello\n")
        script = replay_dir / "edit-and-check.json"
        with (
            running_provider({"control": script}, tmp_path) as provider,
            running_router(
                f"{provider.url}/control/v1", tmp_path / "capture", log=tmp_path / "router.log"
            ) as router,
        ):
            codex_home = tmp_path / "codex-home"
            config = CodexConfig(arm=Arm.CONTROL, router_url=f"{router.url}/v1", model="gpt-5.5")
            write_config(config, codex_home / "config.toml")
            run = codex_exec(codex_home, workspace, "Greet the world in hello.txt.", timeout=90)
            requests = len(provider.get_json("/requests"))
        assert 0 == run.returncode, run.stderr[-2000:]

        frozen = freeze(codex_home / "sessions", tmp_path / "corpus", SEED, 5)
        result = replay(frozen.path)

        (sample,) = frozen.manifest.samples
        assert (1, run.thread_id, 1) == (frozen.manifest.population, sample.session_id, 1)
        rollout = (codex_home / "sessions" / sample.rollout).read_bytes()
        assert rollout == (tmp_path / "corpus" / "samples" / "1.jsonl").read_bytes()
        assert (requests, frozen.sha256) == (result.samples[0].requests, result.manifest_sha256)
        assert result.input_bytes > 0
        assert "Greet the world" not in json.dumps(document_json(result))
