"""ACE's deterministic parts, with hand-written model outputs."""


from learners.playbook import Bullet, Delta, Playbook, cited, parse_deltas, parse_tags


def test_parse_deltas_tags_and_citations():
    text = """ADD [strategies]: Pass Python lists straight to the library's functions.
UPDATE [str-00001]: Pass lists or arrays straight to the library's functions.
REMOVE str-00002
ADD: too short
garbage line"""
    assert parse_deltas(text) == [Delta("ADD", "strategies", "Pass Python lists straight to the library's functions."),
                                  Delta("UPDATE", "str-00001", "Pass lists or arrays straight to the library's functions."),
                                  Delta("REMOVE", "str-00002", ""), Delta("ADD", "strategies", "too short")]
    assert parse_tags("[str-00001]: helpful\nstr-00002 - harmful\nnonsense: helpful") == \
        {"str-00001": "helpful", "str-00002": "harmful"}
    assert cited("I used [str-00001] and [api-00003], again [str-00001].") == ["api-00003", "str-00001"]


def test_merging_is_by_delta_not_rewrite():
    book = Playbook()
    assert book.apply([Delta("ADD", "strategies", "Pass Python lists straight in."),
                       Delta("ADD", "api", "The mean is one call away, never a loop.")]) == 2
    first, second = book.bullets
    assert (first.id, second.id) == ("str-00001", "api-00002")
    assert book.apply([Delta("UPDATE", "str-00001", "Pass lists or arrays straight in."),
                       Delta("REMOVE", "api-00002"), Delta("REMOVE", "zzz-00009"),
                       Delta("ADD", "strategies", "short"), Delta("ADD", "strategies", "pass lists or arrays straight in.")]) == 2
    assert [b.content for b in book.bullets] == ["Pass lists or arrays straight in."] and book.dropped_ops == 3


def test_counters_dedup_and_budget():
    book = Playbook(budget_tokens=25)
    book.bullets = [Bullet("str-00001", "strategies", "Use the library's sum for totals.", helpful=2),
                    Bullet("str-00002", "strategies", "Use the library's sum for all totals.", helpful=1, harmful=1),
                    Bullet("str-00003", "strategies", "Never loop over rows by hand.", helpful=0, harmful=2)]
    book.tag({"str-00001": "helpful", "str-00003": "harmful", "nope-1": "helpful"})
    assert (book.bullets[0].helpful, book.bullets[2].harmful) == (3, 3)
    assert book.merge("str-00002", "str-00001").id == "str-00002"  # the older one stays, whichever is named first
    assert book.merge("str-00001", "str-00002") is None  # already gone
    assert [(b.id, b.helpful, b.harmful) for b in book.bullets] == [("str-00001", 4, 1), ("str-00003", 0, 3)]
    dropped = book.enforce_budget()
    assert dropped == 1 and [b.id for b in book.bullets] == ["str-00001"]  # the harmful one went first
    assert Playbook.from_dict(book.to_dict()) == book
