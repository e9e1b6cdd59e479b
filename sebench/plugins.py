"""Entry-point groups: how learners, memory backends and model backends plug in, one pattern.

A package (ours or a third party's) names its objects in its ``pyproject.toml``::

    [project.entry-points."sebench.learners"]   # a learner class or factory
    [project.entry-points."sebench.memory"]     # factory(path, embedder, **options) -> MemoryStore
    [project.entry-points."sebench.models"]     # a name -> factory(**kwargs), or a prefix such as
                                                # "vllm:" -> factory(rest, **kwargs)

as Gymnasium registers environments: installing the package is the registration, nothing of
ours is edited. Entries are read from the installed metadata and imported only when asked for,
so a third-party package that fails to import breaks the use of its own entries, never the
listing nor our other backends. ``origin`` says where an entry comes from (its distribution
and ``module:attr``), for ``sebench learners`` / ``sebench backends``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

LEARNERS = "sebench.learners"
MEMORY = "sebench.memory"
MODELS = "sebench.models"
OURS = "sebench"  # our own distribution: the suite checks only its entries


@dataclass(frozen=True)
class Plugin:
    """One registered entry: its name, where it lives and which distribution registered it."""

    name: str
    value: str  # module:attr
    distribution: str | None

    @property
    def ours(self) -> bool:
        return self.distribution == OURS

    @property
    def origin(self) -> str:
        return f"{self.value} ({self.distribution or 'unknown distribution'})"


def group(name: str) -> dict[str, EntryPoint]:
    """The entry points of ``name`` installed in this environment, by entry name (read anew each
    call: a test that installs a package sees it at once)."""
    return {ep.name: ep for ep in entry_points(group=name)}


def describe(ep: EntryPoint) -> Plugin:
    dist = getattr(ep, "dist", None)
    return Plugin(ep.name, ep.value, dist.metadata["Name"] if dist is not None else None)
