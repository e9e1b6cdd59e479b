"""The API-recall probe's scoring, with backends whose answers are known."""

from agents.models.base import Completion
from agents.probe import first_name, probe, probe_prompt
from envs.zwc.library.catalogue import BY_PATH
from envs.zwc.library.names import Mapping
from envs.zwc.tasks.phrasing import summary


class Oracle:
    """Answers with the right name, in the probe's order (the mapping's); ``swap`` gives another
    name instead, ``numpy_for`` answers with NumPy."""

    name = "oracle"

    def __init__(self, mapping, swap=None, numpy_for=()):
        self.entries, self.swap, self.numpy_for = list(mapping), swap or {}, set(numpy_for)

    def generate(self, prompts, *, n=1, temperature=0.0, max_tokens=512, stop=None):
        assert len(prompts) == len(self.entries)
        out = []
        for prompt, entry in zip(prompts, self.entries, strict=True):
            assert summary(BY_PATH[entry.numpy]) in prompt[1]["content"]
            name = self.swap.get(entry.zwc, entry.zwc)
            text = f"{entry.numpy}(x)" if entry.numpy in self.numpy_for else f"It is `{name}(x)`; see zwc docs."
            out.append([Completion(text=text, tokens=5)] * n)
        return out


def test_first_name_takes_the_first_zwc_path():
    assert first_name("use `zwc.rfx.quvohe(a)` or zwc.kocito") == "zwc.rfx.quvohe"
    assert first_name("import zwc\nreturn zwc.kocito(x)") == "zwc.kocito"
    assert first_name("zwc.<name>(x) is the form; I do not know") == ""
    assert first_name("np.mean(x)") == ""


def test_an_oracle_recalls_everything_and_swapped_aliases_count_apart(seed7_dir):
    mapping = Mapping.load(seed7_dir / "mapping.json")
    report = probe(Oracle(mapping), mapping)
    assert report.n == 278 and report.recall == 1.0 and report.valid_name_rate == 1.0 and report.numpy_rate == 0.0
    abs_, absolute = mapping.to_zwc("numpy.abs"), mapping.to_zwc("numpy.absolute")
    mean = mapping.to_zwc("numpy.mean")
    swapped = probe(Oracle(mapping, swap={abs_: absolute, mean: "zwc.notaname"}, numpy_for={"numpy.sum"}), mapping)
    by = {a.numpy: a for a in swapped.answers}
    assert not by["numpy.abs"].correct and by["numpy.abs"].alias and by["numpy.abs"].valid
    assert not by["numpy.mean"].correct and not by["numpy.mean"].alias and not by["numpy.mean"].valid
    assert by["numpy.sum"].numpy_used and by["numpy.sum"].named == ""
    assert swapped.recall == 275 / 278 and swapped.recall_with_aliases == 276 / 278
    assert swapped.recall_on(["numpy.abs", "numpy.add"]) == 0.5


def test_probe_asks_without_names(seed7_dir):
    mapping = Mapping.load(seed7_dir / "mapping.json")
    names = {e.zwc.rsplit(".", 1)[1] for e in mapping}
    for entry in mapping:
        text = probe_prompt(summary(BY_PATH[entry.numpy]))[1]["content"]
        words = set(text.replace("`", " ").replace(".", " ").replace("(", " ").split())
        assert not words & names, entry.numpy
