"""The router conformance check: one router image against the scripted provider.

``benchmarks/bench.sh router-check`` (``ROUTER_IMAGE=<image>``) runs the image as the
contract says (``docs/router-contract.md``), sends it recorded Codex requests through
:mod:`hpbench.routercheck.client`, and collects the evidence into a run directory
(:mod:`hpbench.routercheck.evidence`). ``hpbench router check RUN_DIR`` judges it item by
item (:mod:`hpbench.routercheck.judge`). The shell runs the containers; this package
never starts one.
"""
