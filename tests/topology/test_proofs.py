"""The proof plan on plain snapshots: which proofs each place owes, as the lines it reads."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from hpbench.topology import TopologySnapshot
from hpbench.topology.proofs import (
    AttachmentsError,
    Probe,
    Verdict,
    parse_attachments,
    plan_proofs,
)

from ..conftest import HPBENCH, run
from .test_rules import _replace, sound

ATTACHMENTS = (
    "control-agent|hpbench-test_control|br-c0ffee000001|02:42:ac:12:00:02|172.18.0.1 fe80::1\n"
    "hpatch-agent|hpbench-test_hpatch|br-c0ffee000002|02:42:ac:13:00:02|172.19.0.1\n"
)


def addressed() -> TopologySnapshot:
    """The sound topology with addresses on the other routers and the sentinel."""
    snap = sound()
    for service, addresses in (
        ("control-router", ("172.18.0.3", "172.20.0.3")),
        ("hpatch-router", ("172.19.0.3", "172.20.0.4")),
        ("sentinel", ("172.20.0.2",)),
    ):
        view = snap.service(service)
        assert view is not None
        snap = _replace(snap, attrs.evolve(view, addresses=addresses))
    return snap


def _proofs(probes: tuple[Probe, ...]) -> list[str]:
    return [p.proof for p in probes]


class TestAgentProofs:
    def test_every_proof_of_an_agent(self) -> None:
        """control-agent owes each proof by name: its router, the other router by name and
        each address, the sentinel likewise, each host address, then the four checks."""
        plan = plan_proofs(addressed(), parse_attachments(ATTACHMENTS), 40000)
        probes = plan.containers["control-agent"]
        assert [
            "control-agent: router.reachable (control-router)",
            "control-agent: other-router.name (hpatch-router)",
            "control-agent: sentinel.name",
            "control-agent: other-router.address (hpatch-router at 172.19.0.3)",
            "control-agent: other-router.address (hpatch-router at 172.20.0.4)",
            "control-agent: sentinel.address (172.20.0.2)",
            "control-agent: host.address (172.18.0.1)",
            "control-agent: host.address (fe80::1)",
            "control-agent: mcp.none",
            "control-agent: apps.disabled",
            "control-agent: go.login-shell",
            "control-agent: go.offline",
        ] == _proofs(probes)
        lines = [p.line() for p in probes]
        assert lines[0] == (
            "reach\tcontrol-agent: router.reachable (control-router)\tcontrol-router\t8080"
            "\t/api/metrics"
        )
        assert lines[1].startswith("block\t")
        # From inside, a link-local address is zoned by the agent's MAC on that link.
        assert (
            "block\tcontrol-agent: host.address (fe80::1)\tfe80::1%02:42:ac:12:00:02\t40000\t/"
            in lines
        )
        assert "block\tcontrol-agent: host.address (172.18.0.1)\t172.18.0.1\t40000\t/" in lines
        assert "check\tcontrol-agent: go.offline\tgo.offline" == lines[-1]

    def test_each_agent_probes_only_its_own_host_addresses(self) -> None:
        """hpatch-agent probes its own network's gateway, not control's."""
        plan = plan_proofs(addressed(), parse_attachments(ATTACHMENTS), 40000)
        hosts = [p for p in _proofs(plan.containers["hpatch-agent"]) if "host.address" in p]
        assert ["hpatch-agent: host.address (172.19.0.1)"] == hosts
        assert "hpatch-agent: other-router.name (control-router)" in _proofs(
            plan.containers["hpatch-agent"]
        )

    def test_a_stopped_router_has_no_address_to_probe(self) -> None:
        """Only a running container's addresses are probed (a stopped one fails structure)."""
        snap = addressed()
        router = snap.service("hpatch-router")
        assert router is not None
        plan = plan_proofs(_replace(snap, attrs.evolve(router, running=False)), [], None)
        assert not [
            p for p in _proofs(plan.containers["control-agent"]) if "other-router.address" in p
        ]
        assert ["topology.verify"] == sorted({v.proof for v in plan.structure})
        assert all(v.why for v in plan.structure)


class TestHostProofs:
    def test_the_listener_answers_everywhere_it_is_probed(self) -> None:
        """127.0.0.1 and each distinct host address; link-local through its bridge."""
        text = ATTACHMENTS + ATTACHMENTS.splitlines(keepends=True)[1]
        plan = plan_proofs(addressed(), parse_attachments(text), 40000)
        assert [
            "reach\thost.listener (127.0.0.1)\t127.0.0.1\t40000\t/",
            "reach\thost.listener (172.18.0.1)\t172.18.0.1\t40000\t/",
            "reach\thost.listener (fe80::1)\tfe80::1%br-c0ffee000001\t40000\t/",
            "reach\thost.listener (172.19.0.1)\t172.19.0.1\t40000\t/",
        ] == [p.line() for p in plan.host]

    def test_without_a_listener_no_host_proof(self) -> None:
        """No port (the listener did not start, which the shell names): nothing probes it."""
        plan = plan_proofs(addressed(), parse_attachments(ATTACHMENTS), None)
        assert () == plan.host
        assert not any("host." in p for p in _proofs(plan.containers["control-agent"]))


class TestEgressProofs:
    def test_with_the_provider(self) -> None:
        """When the scripted provider runs, the egress network reaches it: proven from the
        sentinel (a router is a plug-in image that need not hold a shell)."""
        plan = plan_proofs(addressed(), [], None)
        assert ("sentinel: provider.reachable",) == tuple(_proofs(plan.containers["sentinel"]))
        assert not [s for s in plan.containers if "router" in s]

    def test_a_real_provider_is_blocked_from_each_agent(self) -> None:
        """A real run's provider is probed from each agent, which must not reach it."""
        plan = plan_proofs(addressed(), [], None, provider=("172.30.0.1", 8443))
        for agent in ("control-agent", "hpatch-agent"):
            lines = [p.line() for p in plan.containers[agent]]
            proof = f"block\t{agent}: provider.address (172.30.0.1:8443)\t172.30.0.1\t8443\t/"
            assert proof in lines


class TestOneArm:
    def test_control_only_proves_the_control_agent_alone(self) -> None:
        """control-only: its agent is proven; a treatment service that runs breaks the
        structure by name (the mode needs none)."""
        snap = addressed()
        only = attrs.evolve(
            snap,
            containers=tuple(c for c in snap.containers if not c.service.startswith("hpatch")),
        )
        only = attrs.evolve(only, networks=tuple(n for n in only.networks if n.key != "hpatch"))
        plan = plan_proofs(only, [], None, arms=("control",))
        assert ["control-agent", "sentinel"] == sorted(plan.containers)
        assert (Verdict("topology.verify"),) == plan.structure
        both = plan_proofs(snap, [], None, arms=("control",)).structure
        reasons = [v.why for v in both]
        assert any("topology.service.unscheduled at $.services.hpatch-agent" in r for r in reasons)
        assert any("topology.service.unscheduled at $.services.hpatch-router" in r for r in reasons)

    def test_a_missing_scheduled_service_is_named(self) -> None:
        snap = addressed()
        only = attrs.evolve(
            snap, containers=tuple(c for c in snap.containers if c.service != "control-router")
        )
        reasons = [v.why for v in plan_proofs(only, [], None, arms=("control",)).structure]
        assert any("topology.service.missing at $.services.control-router" in r for r in reasons)

    def test_without_the_provider(self) -> None:
        """No provider, no router proofs: only the agents are proven from inside."""
        snap = addressed()
        snap = attrs.evolve(
            snap, containers=tuple(c for c in snap.containers if c.service != "provider")
        )
        assert ["control-agent", "hpatch-agent"] == sorted(plan_proofs(snap, [], None).containers)


class TestStructure:
    def test_sound(self) -> None:
        """A sound structure is one ok verdict."""
        assert (Verdict("topology.verify"),) == plan_proofs(sound(), [], None).structure
        assert "ok\ttopology.verify" == Verdict("topology.verify").line()

    def test_each_broken_rule_fails_by_its_code(self) -> None:
        """An agent on two networks: a FAIL naming the rule, the field and the service."""
        snap = sound()
        agent = snap.service("control-agent")
        assert agent is not None
        broken = _replace(snap, attrs.evolve(agent, networks=("control", "hpatch")))
        (line,) = [v.line() for v in plan_proofs(broken, [], None).structure]
        kind, proof, why = line.split("\t")
        assert ("FAIL", "topology.verify") == (kind, proof)
        assert why.startswith("topology.agent.networks at $.services.control-agent.networks: ")

    def test_a_reason_is_one_line(self) -> None:
        """A reason never breaks the line format, whatever it holds."""
        assert "FAIL\tp\ta b c" == Verdict("p", "a\tb\nc").line()


class TestAttachments:
    @pytest.mark.parametrize(
        ("text", "refusal"),
        [
            ("control-agent|net|br-1|02:42:ac:12:00:02\n", "line 1 is not"),
            ("control-agent|net|br-1|mac|1.2.3.4|extra\n", "line 1 is not"),
            ("|net|br-1|mac|1.2.3.4\n", "line 1 is not"),
            ("control-agent|net||mac|1.2.3.4\n", "line 1 is not"),
            ("control-agent|net|br-1|mac|1.2.3.4\nx|n|b|m|gateway\n", "line 2: 'gateway'"),
        ],
    )
    def test_refused(self, text: str, refusal: str) -> None:
        """Anything but service|network|bridge|mac|addresses is refused by line."""
        with pytest.raises(AttachmentsError, match=refusal):
            parse_attachments(text)

    def test_read(self) -> None:
        """Addresses are split; an attachment may have none (no gateway yet)."""
        first, second = parse_attachments(ATTACHMENTS)
        assert ("172.18.0.1", "fe80::1") == first.addresses
        assert "br-c0ffee000002" == second.bridge
        assert () == parse_attachments("a|n|b|m|\n")[0].addresses


class TestWrite:
    def test_files(self, tmp_path: Path) -> None:
        """One file per place, one line per proof, each ending in a newline."""
        plan = plan_proofs(addressed(), parse_attachments(ATTACHMENTS), 40000)
        plan.write(tmp_path / "plan")
        names = sorted(p.name for p in (tmp_path / "plan").iterdir())
        assert [
            "control-agent.probes",
            "host.probes",
            "hpatch-agent.probes",
            "sentinel.probes",
            "structure.verdicts",
        ] == names
        text = (tmp_path / "plan" / "control-agent.probes").read_text()
        assert text.endswith("go.offline\n")
        assert 12 == len(text.splitlines())
        assert "ok\ttopology.verify\n" == (tmp_path / "plan" / "structure.verdicts").read_text()

    def test_the_command_refuses_bad_attachments(self, tmp_path: Path) -> None:
        """The CLI reads the attachments before asking the engine, and names a bad line."""
        bad = tmp_path / "attachments"
        bad.write_text("control-agent|only|three\n")
        command = [str(HPBENCH), "topology", "proofs", "--project", "hpbench-none"]
        done = run([*command, "--attachments", str(bad), "--out", str(tmp_path / "plan")])
        assert 1 == done.returncode
        assert "attachments line 1 is not service|network|bridge|mac|addresses" in done.stderr
        assert not (tmp_path / "plan").exists()
        absent = tmp_path / "absent"
        missing = run([*command, "--attachments", str(absent), "--out", str(tmp_path / "plan")])
        assert 1 == missing.returncode
        assert "cannot read" in missing.stderr
