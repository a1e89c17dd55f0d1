"""The ``hpbench`` command line: one module per command group."""
