"""One episode's record: the conversation, the code, the verdict, tokens and timings."""

from __future__ import annotations

from pydantic import BaseModel, Field

from envs.zwc import Failure, Verdict


class Trajectory(BaseModel):
    task_id: str
    sample: int = 0
    phase: str
    mode: str
    messages: list[dict[str, str]] = Field(default_factory=list)
    code: str = ""
    verdict: Verdict | None = None
    turns: int = 0
    searches: int = 0
    tokens: int = 0
    seconds: float = 0.0
    context: str = ""  # what the learner's context(obs) gave this episode (agents.context_audit)

    @property
    def passed(self) -> bool:
        return self.verdict is not None and self.verdict.passed

    @property
    def failure(self) -> Failure:
        return self.verdict.failure if self.verdict is not None else Failure.NO_CODE
