"""The trainers behind the parametric learners: SFT's (``sft_train``, its data ``sft_data``), GRPO's
(``rl_train``; its settings ``rl_settings``, its reward ``rl_reward``, its trainer class
``rl_trainer``, its rollouts ``grouped_rollout``), the settings they share (``train_settings``)
and the run harness they share (``training_run``).

A room of its own so that the learners (``learners/*.py``) read as what they do and the trainers
as how; nothing here imports a learner. Imported module by module: the trainers pull in torch and
trl, and ``learners`` alone must not.
"""
