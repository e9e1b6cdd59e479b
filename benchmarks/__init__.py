"""Benchmarks, reports and the ``sebench`` command line."""
