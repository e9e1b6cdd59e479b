"""ACE's playbook: itemised bullets with counters, changed only by deterministic code.

Models propose; this module decides. The curator's delta operations (``ADD <section>:``,
``UPDATE <id>:``, ``REMOVE <id>``) are merged — never a rewrite of the whole playbook; the
reflector's tags (``<id>: helpful|harmful|neutral``) move counters; grow-and-refine merges
near-duplicate bullets (``merge``: the older kept, counters summed; ACE finds them through its
memory store, cosine >= 0.9) and enforces the token budget by
dropping the least useful bullets first (those with harmful >= helpful, then the lowest
helpful - harmful, oldest first).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

_ID = r"[a-z]{3}-\d{5}"
_OP_LINE = re.compile(r"^\s*[-*\d.)\s]*\b(ADD|UPDATE|REMOVE)\b(.*)$", re.IGNORECASE)
_SECTION = re.compile(r"\s*\[?([A-Za-z_][A-Za-z_ ]*?)\]?\s*:")
_TAG = re.compile(rf"\[?({_ID})\]?\s*[:=-]\s*(helpful|harmful|neutral)", re.IGNORECASE)
_CITED = re.compile(rf"\[({_ID})\]")
MIN_BULLET_CHARS = 12


def tokens(text: str) -> int:
    """A cheap token estimate (about four characters a token)."""
    return max(1, len(text) // 4)


@dataclass
class Bullet:
    id: str
    section: str
    content: str
    helpful: int = 0
    harmful: int = 0

    def render(self) -> str:
        return f"[{self.id}] (helpful {self.helpful}, harmful {self.harmful}) {self.content}"


@dataclass(frozen=True)
class Delta:
    kind: str  # ADD | UPDATE | REMOVE
    target: str  # a section for ADD, a bullet id otherwise
    content: str = ""


@dataclass
class Playbook:
    budget_tokens: int = 800
    bullets: list[Bullet] = field(default_factory=list)
    counter: int = 0
    dropped_ops: int = 0

    def render(self, ids: set[str] | None = None) -> str:
        """The playbook by section; ``ids``: only those bullets (retrieval), in the playbook's order."""
        sections: dict[str, list[Bullet]] = {}
        for bullet in self.bullets:
            if ids is None or bullet.id in ids:
                sections.setdefault(bullet.section, []).append(bullet)
        return "\n".join(f"## {name}\n" + "\n".join(b.render() for b in items) for name, items in sections.items())

    def get(self, bullet_id: str) -> Bullet | None:
        return next((b for b in self.bullets if b.id == bullet_id), None)

    def apply(self, deltas: list[Delta]) -> int:
        """Merge delta operations; returns how many applied (the rest are counted as dropped)."""
        applied = 0
        for delta in deltas:
            if delta.kind == "ADD":
                if len(delta.content) < MIN_BULLET_CHARS or any(
                        b.content.lower() == delta.content.lower() for b in self.bullets):
                    self.dropped_ops += 1
                    continue
                self.counter += 1
                section = delta.target.strip().lower() or "strategies"
                self.bullets.append(Bullet(bullet_id(section, self.counter), section, delta.content))
                applied += 1
                continue
            bullet = self.get(delta.target.lower())
            if bullet is None or (delta.kind == "UPDATE" and len(delta.content) < MIN_BULLET_CHARS):
                self.dropped_ops += 1
                continue
            if delta.kind == "UPDATE":
                bullet.content = delta.content
            else:
                self.bullets.remove(bullet)
            applied += 1
        return applied

    def tag(self, tags: dict[str, str]) -> None:
        for bullet_id, tag in tags.items():
            bullet = self.get(bullet_id)
            if bullet is None:
                continue
            if tag == "helpful":
                bullet.helpful += 1
            elif tag == "harmful":
                bullet.harmful += 1

    def merge(self, a: str, b: str) -> Bullet | None:
        """Merge two near-duplicate bullets: the older (earlier) one stays with both counters summed,
        the other goes. Returns the bullet removed (None if either id is gone)."""
        first, second = self.get(a), self.get(b)
        if first is None or second is None or first is second:
            return None
        if self.bullets.index(second) < self.bullets.index(first):
            first, second = second, first
        first.helpful += second.helpful
        first.harmful += second.harmful
        self.bullets.remove(second)
        return second

    def enforce_budget(self) -> int:
        """Drop the least useful bullets until the rendered playbook fits the budget."""
        dropped = 0
        while self.bullets and tokens(self.render()) > self.budget_tokens:
            order = sorted(range(len(self.bullets)), key=lambda k: (
                self.bullets[k].harmful < self.bullets[k].helpful,  # harmful >= helpful first
                self.bullets[k].helpful - self.bullets[k].harmful, k))
            self.bullets.pop(order[0])
            dropped += 1
        return dropped

    def to_dict(self) -> dict:
        return {"budget_tokens": self.budget_tokens, "bullets": [asdict(b) for b in self.bullets],
                "counter": self.counter, "dropped_ops": self.dropped_ops}

    @classmethod
    def from_dict(cls, data: dict) -> Playbook:
        return cls(budget_tokens=data["budget_tokens"], bullets=[Bullet(**b) for b in data["bullets"]],
                   counter=data["counter"], dropped_ops=data.get("dropped_ops", 0))


def bullet_id(section: str, number: int) -> str:
    """``abc-00001``: the section's first three letters (spaces, underscores and digits skipped,
    ``x`` where fewer), so that every id matches ``_ID`` and the generator's citation of it
    reaches the bullet (``common mistakes`` -> ``com``, ``to_do`` -> ``tod``, ``a`` -> ``axx``)."""
    letters = re.sub(r"[^a-z]", "", section.lower())
    return f"{letters[:3].ljust(3, 'x')}-{number:05d}"


def parse_deltas(text: str) -> list[Delta]:
    """Delta operations, one a line: ``ADD [section]: content``, ``UPDATE <id>: content``, ``REMOVE <id>``."""
    deltas = []
    for line in text.splitlines():
        match = _OP_LINE.match(line)
        if not match:
            continue
        kind, rest = match.group(1).upper(), match.group(2)
        if kind == "ADD":
            head = _SECTION.match(rest)
            section, content = (head.group(1), rest[head.end():]) if head else ("strategies", rest.lstrip(" :"))
            deltas.append(Delta("ADD", section.strip().lower(), content.strip()))
            continue
        bullet = re.search(_ID, rest)
        if bullet:
            content = rest[bullet.end():].lstrip(" ]:-").strip()
            deltas.append(Delta(kind, bullet.group(0), content))
    return deltas


def parse_tags(text: str) -> dict[str, str]:
    return {bullet_id.lower(): tag.lower() for bullet_id, tag in _TAG.findall(text)}


def cited(text: str) -> list[str]:
    return sorted(set(_CITED.findall(text)))
