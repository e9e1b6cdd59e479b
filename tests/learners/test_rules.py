"""ExpeL's deterministic parts, with hand-written model outputs."""

from learners.rules import Operation, RuleBook, parse_operations


def test_parse_operations_from_model_text():
    text = """Here are my operations:
1. ADD: Always import zwc before calling its functions.
2. AGREE 1: yes
- EDIT 2: Return arrays as they are; the grader converts them.
REMOVE 3: no longer useful
ADD 7: a fifth one that is over the limit"""
    ops = parse_operations(text)
    assert ops == [Operation("ADD", None, "Always import zwc before calling its functions."),
                   Operation("AGREE", 1, "yes"),
                   Operation("EDIT", 2, "Return arrays as they are; the grader converts them."),
                   Operation("REMOVE", 3, "no longer useful")]
    assert parse_operations("nothing useful here") == []
    assert parse_operations("AGREE: missing its number\nADD:") == []


def test_importance_arithmetic():
    book = RuleBook(cap=3)
    book.apply([Operation("ADD", None, "rule a"), Operation("ADD", None, "rule b")])
    assert [(r.text, r.importance) for r in book.rules] == [("rule a", 2), ("rule b", 2)]
    book.apply([Operation("AGREE", 2, ""), Operation("EDIT", 1, "rule a, sharper")])
    assert [(r.text, r.importance) for r in book.rules] == [("rule a, sharper", 3), ("rule b", 3)]  # stable
    book.apply([Operation("REMOVE", 1, ""), Operation("REMOVE", 2, ""), Operation("REMOVE", 2, "")])
    assert [(r.text, r.importance) for r in book.rules] == [("rule a, sharper", 2), ("rule b", 1)]
    book.apply([Operation("REMOVE", 2, "")])
    assert [r.text for r in book.rules] == ["rule a, sharper"]  # at 0: deleted


def test_over_cap_removals_cost_three_and_unmatched_operations_are_dropped():
    book = RuleBook(cap=2)
    book.apply([Operation("ADD", None, t) for t in ("a", "b", "c")])
    assert len(book.rules) == 3
    book.apply([Operation("REMOVE", 1, "")])
    assert [r.text for r in book.rules] == ["b", "c"]  # 2 - 3 < 0: gone
    before = book.dropped
    book.apply([Operation("AGREE", 9, ""), Operation("EDIT", None, "x"), Operation("ADD", None, "B")])
    assert book.dropped == before + 3 and [r.text for r in book.rules] == ["b", "c"]


def test_round_trip():
    book = RuleBook(cap=5)
    book.apply([Operation("ADD", None, "keep it short")])
    assert RuleBook.from_dict(book.to_dict()) == book
