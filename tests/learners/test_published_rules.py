"""ACE and ExpeL as their papers define them, on the rules a reading of the code got wrong before:
ACE's online samples of one task are independent (the same playbook for each), its bullet ids
round-trip whatever the section is called; ExpeL compares every failed attempt of a task with its
success, not only the last one."""

from agents import Agent
from learners import AceLearner, ExpelLearner
from learners.expel import TaskRecord
from learners.playbook import _ID, Delta, Playbook, cited, parse_deltas, parse_tags
from tests.agents.fixed_answer import ScriptedModel

REFLECTOR, CURATOR = "You are the Reflector.", "You are the Curator"
COMPARE = "A task, a failed attempt and a successful attempt follow."  # learners.expel.COMPARE only


def test_every_sample_of_one_test_task_sees_the_same_playbook_online(task_env):
    """n = 3 samples of one task, online: each sample's update changes the playbook, yet all three
    were asked with the playbook as it stood before the first (pass@k needs independent samples);
    the next task sees what they taught."""
    lessons = ["Call the zwc function once on the whole list instead of looping.",
               "Convert the zwc result to plain Python floats before returning it.",
               "Check for an empty input first and return an empty list for it."]
    adds = [f"ADD [strategies]: {lesson}" for lesson in lessons]
    curator = ScriptedModel({REFLECTOR: ["It failed."], CURATOR: adds})
    learner = AceLearner(online=True, max_tokens=48)
    learner.bind(curator)
    generator = ScriptedModel({})
    agent = Agent(model=generator, learner=learner, max_tokens=48)
    first, second = task_env.tasks("single_test")[:2]
    agent.run_episodes(task_env, [(first, s) for s in range(3)], phase="test", mode="closed")
    assert learner.online_updates == 3 and len(learner.playbook.bullets) == 3
    asked = generator.seen[None]
    assert len(asked) == 3 and not any(lesson in text for text in asked for lesson in lessons)  # as before any
    agent.run_episodes(task_env, [(second, 0)], phase="test", mode="closed")
    later = generator.seen[None][3]
    assert all(lesson in later for lesson in lessons)
    agent.run_episodes(task_env, [(first, 0)], phase="test", mode="closed")  # the same task, evaluated again
    again = generator.seen[None][4]
    assert all(lesson in again for lesson in lessons)  # its samples were all done: no stale snapshot


def test_within_one_evaluation_each_task_keeps_its_snapshot_whatever_the_concurrency(task_env, tmp_path):
    """ACE online under ``evaluate``, one episode at a time (concurrency 1 < n = 3): a task's samples
    never overlap, and each of them updates the playbook, yet all three are asked with the playbook
    as it stood when the task was first asked (before, a snapshot ended with its last running sample,
    so here sample 2 saw what sample 1 taught); the next task sees what the first one's samples taught,
    and its own three samples see the same playbook; a later evaluation sees everything."""
    from agents.evaluate import evaluate

    lessons = ["Call the zwc function once on the whole list instead of looping.",
               "Convert the zwc result to plain Python floats before returning it.",
               "Check for an empty input first and return an empty list for it.",
               "Read the docstring of the task twice before writing the first line of code."]
    curator = ScriptedModel({REFLECTOR: ["It failed."], CURATOR: [f"ADD [strategies]: {lesson}" for lesson in lessons]})
    learner = AceLearner(online=True, max_tokens=48)
    learner.bind(curator)
    generator = ScriptedModel({})
    agent = Agent(model=generator, learner=learner, max_tokens=48, concurrency=1)
    first, second = task_env.tasks("single_test")[:2]
    evaluate(agent, task_env, split="single_test", n=3, limit=2, out=tmp_path / "online.jsonl", progress=False)
    assert learner.online_updates == 6
    asked = generator.seen[None]
    assert len(asked) == 6 and [first.query in text for text in asked] == [True] * 3 + [False] * 3
    assert asked[0] == asked[1] == asked[2] and not any(lesson in text for text in asked[:3] for lesson in lessons)
    assert asked[3] == asked[4] == asked[5] and all(lesson in asked[3] for lesson in lessons[:3])
    assert lessons[3] not in asked[3]  # taught by the second task's own first sample: not shown to its others
    evaluate(agent, task_env, split="single_test", n=1, limit=1, out=tmp_path / "later.jsonl", progress=False)
    assert all(lesson in generator.seen[None][6] for lesson in lessons)  # a later evaluation: a new snapshot


def test_bullet_ids_round_trip_for_any_section_name():
    book = Playbook()
    deltas = parse_deltas("ADD [common mistakes]: Never loop over a list element by element.\n"
                          "ADD [to_do]: Check the shape of the zwc result first.\n"
                          "ADD [a]: Return plain Python numbers at the end.")
    assert book.apply(deltas) == 3
    ids = [b.id for b in book.bullets]
    assert ids == ["com-00001", "tod-00002", "axx-00003"]
    import re

    assert all(re.fullmatch(_ID, i) for i in ids)
    answer = " ".join(f"[{i}]" for i in ids)
    assert cited(answer) == sorted(ids)  # the generator's citations reach the bullets
    book.tag(parse_tags("\n".join(f"{i}: helpful" for i in ids)))
    assert [b.helpful for b in book.bullets] == [1, 1, 1]
    assert book.apply([Delta("REMOVE", "tod-00002")]) == 1 and [b.id for b in book.bullets] == [ids[0], ids[2]]


def test_expel_compares_every_failed_attempt_with_the_success():
    learner = ExpelLearner(insight_max_tokens=48)
    failed = [{"code": f"def solve():\n    return {i}  # attempt {i}", "failure": "wrong_answer", "detail": ""}
              for i in (1, 2, 3)]
    learner.records = {"t1": TaskRecord("t1", "Average a list.", failures=failed, success="import zwc  # the one"),
                       "t2": TaskRecord("t2", "Sum a list.", failures=failed[:1])}  # never solved: no pair
    model = ScriptedModel({COMPARE: ["ADD: Call the zwc function on the whole list at once."]})
    learner._extract(Agent(model=model))
    compared = model.seen[COMPARE]
    assert len(compared) == 3  # one comparison per (failure, success) pair of t1
    for i, text in enumerate(compared, start=1):
        assert f"attempt {i}" in text and "the one" in text and "Sum a list" not in text
