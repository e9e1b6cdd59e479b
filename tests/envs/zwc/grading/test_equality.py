import math

import pytest

from envs.zwc.grading.equality import OFFICIAL_ABS_TOL, parse_printed, printed_equal, values_equal


@pytest.mark.parametrize(("text", "value"), [
    ("[15, 160, 17]", [15, 160, 17]),
    ("[1. 2.]", [1.0, 2.0]),
    ("[[1 2]\n [3 4]]", [[1, 2], [3, 4]]),
    ("array([1., 2.])", [1.0, 2.0]),
    ("ZWCArray([[1, 2],\n         [3, 4]], dtype=int32)", [[1, 2], [3, 4]]),
    ("(array([0, 1]), array([1, 0]))", ([0, 1], [1, 0])),
    ("[ True False]", [True, False]),
    ("(1+2j)", 1 + 2j),
    ("[1.+2.j 3.-1.j]", [1 + 2j, 3 - 1j]),
    ("np.float64(1.5)", 1.5),
    ("1.5e-05", 1.5e-05),
    ("[]", []),
    ("((1, 2),)", ((1, 2),)),
    ("'abc'", "abc"),
    ("None", None),
])
def test_parse_printed(text, value):
    assert values_equal(parse_printed(text), value, rel_tol=0, abs_tol=0)


def test_parse_non_finite():
    got = parse_printed("[ nan  inf -inf]")
    assert math.isnan(got[0]) and got[1] == math.inf and got[2] == -math.inf


# a bad escape inside a string token ("['\\x']" printed by a candidate) once raised SyntaxError,
# which no caller catches: the grader crashed instead of failing the answer
@pytest.mark.parametrize("text", ["[1 2", "abc def", "[1, ..., 9]", "", "['\\x']", "[1, '\\N{nope}']"])
def test_unparseable_outputs_raise(text):
    with pytest.raises(ValueError):
        parse_printed(text)


def test_values_equal_structure_and_tolerance():
    assert values_equal([1, (2.0, 3)], [1.0, [2, 3.0000000001]])
    assert not values_equal([1, 2], [1, 2, 3])
    assert not values_equal(1.0, 1.1)
    assert values_equal(float("nan"), float("nan"))
    assert not values_equal(float("nan"), 0.0)
    assert values_equal(float("inf"), float("inf")) and not values_equal(float("inf"), -float("inf"))
    assert values_equal(True, 1) and not values_equal(None, 0) and not values_equal("1", 1)
    assert values_equal(1 + 1e-12j, 1.0)
    assert values_equal({"a": [1]}, {"a": [1.0]})


def test_official_rule_uses_absolute_tolerance():
    assert OFFICIAL_ABS_TOL == 1e-2
    assert printed_equal("[0.881373587019543, 1.6]", "[0.8813735870195429, 1.605]")
    assert not printed_equal("[0.88, 1.6]", "[0.88, 1.62]")
    assert printed_equal("[ 15 160  17]", "[15, 160, 17]")
    assert printed_equal("hello world", "hello world ")  # unparseable text compares as text
