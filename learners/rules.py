"""ExpeL's rule list: operations parsed from model text and applied by deterministic code.

A model answers with at most ``MAX_OPERATIONS`` lines ``ADD: <rule>``, ``EDIT <n>: <rule>``,
``AGREE <n>: ...``, ``REMOVE <n>: ...`` (``<n>`` numbers the rule list it was shown). ADD enters
at importance 2; AGREE and EDIT add 1; REMOVE takes 1 (3 while the list is over its cap);
a rule at 0 or below is deleted; the list stays sorted by importance. Operations that name no
existing rule are dropped and counted, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

MAX_OPERATIONS = 4
MIN_RULE_CHARS = 12
_OPERATION = re.compile(r"^\s*[-*\d.)\s]*\b(ADD|EDIT|AGREE|REMOVE)\b\s*(?:#|rule\s*)?(\d+)?\s*[:.-]\s*(.*?)\s*$",
                        re.IGNORECASE | re.MULTILINE)


@dataclass
class Rule:
    text: str
    importance: int = 2


@dataclass(frozen=True)
class Operation:
    kind: str  # ADD | EDIT | AGREE | REMOVE
    index: int | None  # 1-based position in the list shown to the model
    text: str


@dataclass
class RuleBook:
    cap: int = 20
    rules: list[Rule] = field(default_factory=list)
    dropped: int = 0  # operations that matched no rule, or were malformed
    applied: int = 0

    def numbered(self) -> str:
        return "\n".join(f"{i}. {r.text}" for i, r in enumerate(self.rules, 1)) or "(no rules yet)"

    def apply(self, operations: list[Operation]) -> None:
        """Apply operations against the list as it was shown (indices refer to that list)."""
        shown = list(self.rules)
        for op in operations[:MAX_OPERATIONS]:
            if op.kind == "ADD":
                if op.text and all(op.text.lower() != r.text.lower() for r in self.rules):
                    self.rules.append(Rule(op.text, 2))
                    self.applied += 1
                else:
                    self.dropped += 1
                continue
            if op.index is None or not 1 <= op.index <= len(shown) or shown[op.index - 1] not in self.rules:
                self.dropped += 1
                continue
            rule = shown[op.index - 1]
            if op.kind == "AGREE":
                rule.importance += 1
            elif op.kind == "EDIT":
                if op.text:
                    rule.text = op.text
                rule.importance += 1
            elif op.kind == "REMOVE":
                rule.importance -= 3 if len(self.rules) > self.cap else 1
            self.applied += 1
        self.rules = sorted((r for r in self.rules if r.importance > 0), key=lambda r: -r.importance)

    def to_dict(self) -> dict:
        return {"cap": self.cap, "rules": [asdict(r) for r in self.rules], "dropped": self.dropped,
                "applied": self.applied}

    @classmethod
    def from_dict(cls, data: dict) -> RuleBook:
        return cls(cap=data["cap"], rules=[Rule(**r) for r in data["rules"]], dropped=data.get("dropped", 0),
                   applied=data.get("applied", 0))


def parse_operations(text: str) -> list[Operation]:
    """The operations in a model's answer (at most ``MAX_OPERATIONS``); malformed lines are skipped."""
    operations = []
    for kind, index, body in _OPERATION.findall(text):
        kind = kind.upper()
        if kind == "ADD" and (len(body) < MIN_RULE_CHARS or len(body.split()) < 3):
            continue  # "ADD: A:" is noise, not a rule
        if kind != "ADD" and not index:
            continue
        operations.append(Operation(kind, int(index) if index else None, body.strip()))
    return operations[:MAX_OPERATIONS]
