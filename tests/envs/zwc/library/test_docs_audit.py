"""The docs audit (envs.zwc.library.docs_audit) on texts made here: names the learner never met count
as the docs however short, copied doc text counts by its word n-grams, a task's own words never do."""

import random
from types import SimpleNamespace

from envs.zwc.library.docs_audit import THRESHOLD, audit, met_functions, shingles
from envs.zwc.library.names import Mapping

WORDS = ("array axis value element input output shape sum product mean order index sorted mask window count "
         "first last row column matrix vector scalar integer float result given along over each every").split()
DOCS = {f"zwc.name{i}x": " ".join(random.Random(i).choices(WORDS, k=30)) for i in range(40)}  # distinct texts


def test_a_cheat_sheet_of_names_is_the_docs_however_short():
    sheet = "\n".join(f"- {path}: quantity {i}" for i, path in enumerate(DOCS))
    found = audit([sheet], DOCS, met=set())
    assert found.share == 1.0 and found.is_docs and len(found.unmet_names) == 40 and found.text_share == 0.0
    assert "40 of 40 doc entries carried" in found.sentence() and "40 zwc names it never met" in found.sentence()


def test_names_the_learner_met_are_its_own_and_a_few_are_below_the_threshold():
    met = set(list(DOCS)[:3])
    notes = "\n".join(f"zwc.{path.split('.')[1]}(x) worked for the task" for path in met)
    found = audit([notes, ""], DOCS, met=met)
    assert found.share == 0.0 and not found.is_docs and found.contexts == 1
    one_unmet = audit([notes + "\nzwc.name7x also exists"], DOCS, met=met)
    assert one_unmet.carried == ["zwc.name7x"] and one_unmet.share == 1 / 40 < THRESHOLD


def test_copied_doc_text_counts_without_any_name_but_the_tasks_own_words_do_not():
    copied = " ".join(DOCS[f"zwc.name{i}x"] for i in range(10)).upper()  # layout and case do not hide it
    found = audit([copied], DOCS, met=set())
    assert len(found.carried) == 10 and found.share == 0.25 and found.is_docs and found.text_share > 0.2
    task = DOCS["zwc.name0x"]  # a task that happens to say what a doc says
    assert "zwc.name0x" not in audit([task], DOCS, met=set(), task_text=task).carried
    assert shingles("a b c d e f") == {tuple("abcde"), tuple("bcdef")}


def test_the_functions_met_are_the_tasks_and_what_their_references_call():
    mapping = Mapping.generate(0)
    mean, std = mapping.to_zwc("numpy.mean"), mapping.to_zwc("numpy.std")
    task = SimpleNamespace(selected_functions=["mean"], reference=f"import zwc\ndef f(x):\n    return {std}(x) + 1\n")
    assert met_functions([task], mapping) == {mean, std}


def test_boilerplate_that_many_entries_share_marks_none_of_them():
    boiler = " out ndarray optional a location into which the result is stored if provided it must have a shape"
    docs = {path: text + boiler for path, text in DOCS.items()}
    one = audit([docs["zwc.name3x"]], docs, met={"zwc.name3x"})
    assert one.carried == ["zwc.name3x"] and not one.is_docs  # the copied entry, not the 39 that share its tail


def test_a_name_spelled_out_with_separators_is_still_the_name():
    spelled = "\n".join("-".join(path.split(".")[1]) for path in DOCS)  # n-a-m-e-1-x ...
    assert audit([spelled], DOCS, met=set()).share == 1.0
    assert audit(["a perfectly ordinary sentence about arrays"], DOCS, met=set()).share == 0.0


def test_a_learner_that_shows_each_question_only_its_own_entry_is_the_docs():
    """It carries 1 entry per task, few in all (share below the threshold), but every task its own."""
    targets = [(DOCS[path], [path]) for path in list(DOCS)[:3]]
    found = audit([c for c, _ in targets], DOCS, met=set(list(DOCS)[:3]), targets=targets)
    assert found.share == 3 / 40 < THRESHOLD and found.targeted == found.tasks == 3 and found.is_docs
    assert "3 of 3 test tasks shown their own function's entry" in found.sentence()
    honest = audit(["solved it with a loop"], DOCS, met=set(), targets=[("solved it with a loop", ["zwc.name0x"])])
    assert honest.targeted == 0 and not honest.is_docs


def test_copied_text_with_every_eighth_word_dropped_is_still_carried():
    words = DOCS["zwc.name5x"].split()
    thinned = " ".join(w for i, w in enumerate(words) if i % 8 != 7)
    assert audit([thinned], DOCS, met=set()).carried == ["zwc.name5x"]
