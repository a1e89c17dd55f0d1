"""Issue reports (spec 004): what the diagnose hook published, collected by the runner.

See :mod:`hpbench.issuereports.model` for the contract, ``docs/issue-reports.md`` for the
flow.
"""
