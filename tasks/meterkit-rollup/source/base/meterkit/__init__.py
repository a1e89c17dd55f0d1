"""meterkit: usage metering for a multi-tenant service."""

from meterkit.usage import UsageEvent, total

__all__ = ["UsageEvent", "total"]
