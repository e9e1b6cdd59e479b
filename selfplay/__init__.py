"""Self-play: models propose tasks for the zwc library, the sandbox validates them, buffers keep them.

The parts, one file each, for a loop ``propose -> validate -> solve -> learn``: proposal.py (the
format), proposer.py (a model proposes), teacher.py (``reference``: re-proposes train tasks, to
test loops), validate.py and reasons.py (what is kept, and why not), buffer.py (persistent task
buffers), curriculum.py (learnability, the round log and plot, and ``RoundLoop``), and the
learners built on them: sft_self.py (``closed-sft-self``, ``open-sft-self``) and absolute_zero.py
(``absolute-zero``: azr_tasks.py makes deduction, abduction and induction tasks of a kept program and
grades them by execution; azr_rollout.py runs each round inside trl's GRPO rollout). One round loop::

    loop = RoundLoop(RUN, env, rounds=3, proposals=8, samples=2)   # RUN/buffer-sebench.jsonl, rounds.jsonl
    loop.run(proposer=lambda r: make_proposer(env, "reference", tasks=env.tasks("train")[:48]),
             solver=lambda r: Agent(model="reference"),        # solves the accepted tasks with the docs
             learn=lambda work: {...})                        # the round's update; its figures are logged
    # finished rounds are not redone; a round killed midway is redone whole; RUN/rounds.png at the end

Names are imported on first use, so ``import selfplay`` stays light.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "Proposal": "selfplay.proposal", "parse_proposal": "selfplay.proposal", "render_task": "selfplay.proposal",
    "Proposer": "selfplay.proposer", "ProposerConfig": "selfplay.proposer", "ProposalRequest": "selfplay.proposer",
    "Reason": "selfplay.reasons", "Rejected": "selfplay.reasons",
    "Accepted": "selfplay.validate", "ValidationReport": "selfplay.validate", "Validator": "selfplay.validate",
    "ValidatorConfig": "selfplay.validate",
    "BufferEntry": "selfplay.buffer", "TaskBuffer": "selfplay.buffer",
    "RoundLog": "selfplay.curriculum", "RoundRecord": "selfplay.curriculum", "learnability": "selfplay.curriculum",
    "mean_learnability": "selfplay.curriculum", "plot_rounds": "selfplay.curriculum",
    "Round": "selfplay.curriculum", "RoundLoop": "selfplay.curriculum", "solve": "selfplay.curriculum",
    "TeacherProposer": "selfplay.teacher", "make_proposer": "selfplay.teacher",
    "ClosedSFTSelfLearner": "selfplay.sft_self", "OpenSFTSelfLearner": "selfplay.sft_self",
    "SFTSelfConfig": "selfplay.sft_self",
    "AbsoluteZeroLearner": "selfplay.absolute_zero", "AbsoluteZeroConfig": "selfplay.absolute_zero",
    "AZRSettings": "selfplay.absolute_zero", "make_task": "selfplay.azr_tasks", "grade_many": "selfplay.azr_tasks",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'selfplay' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
