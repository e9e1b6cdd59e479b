#!/bin/sh
# issue 37's six-learner comparison (resumable: a rerun skips finished rows on the same machine kind)
cd /work/main && exec .venv/bin/sebench compare --zwc /work/l37/zwc-seed0 \
  --learners none,expel,ace,closed-sft,doc-sft,doc-selfedit --model qwen2.5-coder-0.5b --dtype float32 \
  --gather-model '' --limit 20 --train-limit 20 --max-tokens 160 \
  --set closed-sft.max_steps=10 --set closed-sft.samples=2 --set doc-sft.max_steps=10 \
  --set doc-selfedit.max_steps=10 --set doc-selfedit.edits=2 --out /work/l37/compare
