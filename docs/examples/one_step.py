"""OneStep: a learner that trains weights, as small as one can be (docs/write-a-learner.md).

It fine-tunes the agent's model with a few plain SGD steps on the train tasks' reference
solutions (the completion only, after the task's question) and hands the agent the trained model.
An example of the parametric side of the protocol, not a method: use ``closed-sft`` for that.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.learner import EvolveReport, ParametricConfig, setting
from learners.base import load_state, save_state
from learners.parametric import base_model_path


@dataclass
class OneStepConfig(ParametricConfig):
    steps: int = setting(2, "SGD steps over the train tasks' reference solutions.")
    learning_rate: float = setting(1e-3, "The SGD step size.")


class OneStep:
    name = "one-step"
    parametric = True
    config_class = OneStepConfig

    def __init__(self, config=None, **settings):
        self.config = config or OneStepConfig(**settings)
        self.losses: list[float] = []

    def context(self, obs):
        return ""  # what it learned is in the weights, not the prompt

    def observe(self, trajectory):
        return None  # learns in evolve only

    def evolve(self, agent, env):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from agents.models.transformers_model import TransformersModel

        tasks = [t for t in env.tasks("train")[: self.config.limit] if t.reference]  # train only, first N
        base = base_model_path(agent.model_spec if isinstance(agent.model_spec, str) else agent.model)
        tokenizer = AutoTokenizer.from_pretrained(base)
        model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
        optimiser = torch.optim.SGD(model.parameters(), lr=self.config.learning_rate)
        for _ in range(self.config.steps):
            for task in tasks:
                prompt = tokenizer(task.query + "\n", return_tensors="pt")["input_ids"]
                answer = tokenizer(task.reference, return_tensors="pt")["input_ids"]
                ids = torch.cat([prompt, answer], dim=1)
                labels = ids.clone()
                labels[:, : prompt.shape[1]] = -100  # the loss is on the answer only
                loss = model(input_ids=ids, labels=labels).loss
                loss.backward()
                optimiser.step()
                optimiser.zero_grad()
                self.losses.append(round(loss.item(), 4))
        out = Path(self.config.model_dir or Path(self.config.state_dir) / "model")
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
        agent.model = TransformersModel(out, name=f"{agent.name}+{self.name}", dtype="float32")
        if self.config.state_dir:
            self.save(self.config.state_dir)
        return EvolveReport(learner=self.name, episodes=0, seconds=0.0,
                            details={"tasks": len(tasks), "first_loss": self.losses[0], "last_loss": self.losses[-1]})

    def save(self, path):
        save_state(path, self.name, {"config": asdict(self.config), "losses": self.losses}, "one_step.json")

    def load(self, path):
        self.losses = load_state(path, self.name, "one_step.json")["losses"]

    def __repr__(self):
        return f"OneStep({json.dumps(asdict(self.config))})"
