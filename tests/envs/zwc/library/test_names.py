import json

import pytest

from envs.zwc.errors import MappingError, UnknownNameError
from envs.zwc.library.catalogue import CATALOGUE, KINDS
from envs.zwc.library.names import Mapping, forbidden_names


def test_catalogue_has_the_278_official_functions(api_doc):
    rows = [json.loads(line) for line in api_doc.read_text().splitlines()]
    official = Mapping.from_sebench_v1(api_doc)
    assert len(CATALOGUE) == len(rows) == 278
    assert {e.numpy for e in CATALOGUE} == {e.numpy for e in official}
    assert all(e.kind in KINDS for e in CATALOGUE)
    shared = {e.short for e in CATALOGUE if e.is_linalg} & {e.short for e in CATALOGUE if not e.is_linalg}
    assert shared == {"cross", "diagonal", "matmul", "outer", "tensordot", "trace"}


def test_official_names_reproduced_exactly(api_doc):
    mapping = Mapping.from_sebench_v1(api_doc)
    rows = [json.loads(line) for line in api_doc.read_text().splitlines()]
    for row, entry in zip(rows, mapping, strict=True):
        assert entry.short == row["curr_name"]
        assert entry.numpy.endswith("." + row["original_name"])
        for np_name, zwc_name in json.loads(row["func_mapping"]).items():
            assert mapping.to_zwc(np_name) == zwc_name
    assert mapping.to_zwc("np.mean") == "zwc.kocito"
    assert mapping.to_zwc("numpy.linalg.qr") == "zwc.rfx.redupav"
    assert mapping.to_numpy("zwc.rfx.cecim") == "numpy.linalg.cross"
    assert mapping.to_numpy("zwc.zunakik") == "numpy.cross"


def test_fresh_names_are_deterministic_disjoint_and_unguessable():
    a, a_again, b = Mapping.generate(7), Mapping.generate(7), Mapping.generate(8)
    assert a == a_again
    names_a, names_b = {e.short for e in a}, {e.short for e in b}
    assert len(names_a) == len(a) == 278
    assert not names_a & names_b
    bad = forbidden_names()
    for name in names_a | names_b:
        assert 4 <= len(name) <= 8 and name.isalpha() and name.islower()
        assert name not in bad
    assert {e.numpy for e in a} == {e.numpy for e in CATALOGUE}


def test_many_seeds_never_share_a_name():
    seen: set[str] = set()
    for seed in range(12):
        names = {e.short for e in Mapping.generate(seed)}
        assert not names & seen
        seen |= names


def test_mapping_round_trips_through_json(tmp_path):
    mapping = Mapping.generate(3)
    mapping.save(tmp_path / "mapping.json")
    assert Mapping.load(tmp_path / "mapping.json") == mapping


def test_unknown_names_suggest_close_ones():
    mapping = Mapping.generate(0)
    with pytest.raises(UnknownNameError, match="did you mean"):
        mapping.to_zwc("numpy.meen")


def test_bad_api_doc_names_the_line(tmp_path):
    path = tmp_path / "api_doc.jsonl"
    path.write_text('{"original_name": "mean", "curr_name": "abc", "func_mapping": "{}"}\nnot json\n')
    with pytest.raises(MappingError, match=r"api_doc.jsonl:2"):
        Mapping.from_sebench_v1(path)
    with pytest.raises(MappingError, match="no such API doc"):
        Mapping.from_sebench_v1(tmp_path / "missing.jsonl")
    with pytest.raises(MappingError, match="seed -1 out of range"):
        Mapping.generate(-1)
