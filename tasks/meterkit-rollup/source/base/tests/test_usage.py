import pytest

from meterkit import UsageEvent, total


def test_total_sums_one_tenant_and_metric() -> None:
    events = [
        UsageEvent("acme", "requests", 3, 100),
        UsageEvent("acme", "requests", 4, 160),
        UsageEvent("acme", "bytes", 900, 100),
        UsageEvent("globex", "requests", 5, 100),
    ]
    assert total(events, "acme", "requests") == 7
    assert total(events, "globex", "bytes") == 0


def test_event_rejects_negative_amounts() -> None:
    with pytest.raises(ValueError):
        UsageEvent("acme", "requests", -1, 100)
