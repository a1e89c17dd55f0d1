"""meterkit: usage metering for a multi-tenant service."""

from meterkit.rollup import Bucket, rollup
from meterkit.usage import UsageEvent, total

__all__ = ["Bucket", "UsageEvent", "rollup", "total"]
