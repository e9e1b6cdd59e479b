"""Task generation: single-function and composed tasks, verified by execution.

``build_tasks`` writes ``train.jsonl``, ``single_test.jsonl``, ``multiple_test.jsonl`` and a
``build_report.json`` into a ZWC build directory (``sebench tasks build``).
"""

from envs.zwc.tasks.build import BuildReport, build_tasks

__all__ = ["BuildReport", "build_tasks"]
