"""Grade every task's own reference again from the written files, under standard and strict usage.

The build keeps only tasks whose reference passed in the sandbox; this re-check is the proof from
the outside (a changed grader, or a file edited after the build, shows here) and is too long for the
timed test suite (1,436 references x 2 rules: about a minute and a half on 2 cores), so it runs in
``make bench``. Exits 1 when any reference fails, naming it.

    python -m benchmarks.perf.reference_check --zwc .bench/zwc-seed0
"""

from __future__ import annotations

import argparse
import sys
import time

from envs.zwc import ZWCEnv

SPLITS = ("train", "single_test", "multiple_test")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zwc", required=True, help="a ZWC build with tasks (sebench tasks build)")
    parser.add_argument("--workers", type=int, default=2, help="sandbox workers")
    args = parser.parse_args(argv)
    env = ZWCEnv.load(args.zwc, workers=args.workers)
    failures = 0
    try:
        for usage in ("standard", "strict"):
            for split in SPLITS:
                tasks = env.tasks(split)
                start = time.perf_counter()
                verdicts = env.check_many([(t, t.reference) for t in tasks], usage=usage)
                failed = [(t.task_id, v.failure.value, v.detail)
                          for t, v in zip(tasks, verdicts, strict=True) if not v.passed]
                failures += len(failed)
                print(f"{usage:8} {split:13} {len(tasks) - len(failed):5}/{len(tasks):<5} references pass "
                      f"({time.perf_counter() - start:.1f} s)")
                for task_id, failure, detail in failed[:10]:
                    print(f"    {task_id}: {failure}: {detail}")
    finally:
        env.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
