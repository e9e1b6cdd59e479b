"""The LLM pipeline: parsing, execution in the sandbox, consensus, verification, and a real run."""

from agents.models import load_model
from envs.zwc import Task, TestCase
from envs.zwc.library.catalogue import BY_PATH
from selfplay.llm_tasks import generate_llm_tasks, parse_proposal, process

GOOD = """PROBLEM:
A sensor logs readings; report how far each reading is from zero, whatever its sign.
SIGNATURE:
def solve(x):
INPUTS:
x=[1.0, -2.0]
x=[-3.5]
x=[0.0, 4.0, -4.0]
x=[-1.25, 2.5]
x=[7.0]
x=[-8.0, 8.0, 0.5]
x=[3.0, -3.0]
x=[-0.5, -0.25]
SOLUTION:
```python
import numpy as np

def solve(x):
    return np.abs(x)
```"""


def test_parse_proposal_and_its_refusals():
    entry = BY_PATH["numpy.abs"]
    proposal = parse_proposal(GOOD, entry)
    assert proposal.signature == "def solve(x):" and len(proposal.inputs) == 8
    assert "np.abs" in proposal.solution
    assert parse_proposal("PROBLEM:\nx\n", entry).startswith("missing section")
    assert parse_proposal(GOOD.replace("x=[7.0]\n", "").replace("x=[3.0, -3.0]\n", ""), entry) == \
        "only 6 usable inputs"
    assert parse_proposal(GOOD.replace("def solve(x):\nINPUTS", "solve x\nINPUTS"), entry) == \
        "signature is not a def line"


def test_process_keeps_a_good_task_and_drops_on_failed_consensus(official_env):
    proposal = parse_proposal(GOOD, BY_PATH["numpy.abs"])
    solver_task = Task(query=proposal.query, function_name=proposal.signature,
                       test_cases=[TestCase(input="x=[1.0]")], reference=proposal.solution)
    solver = load_model("reference", tasks=[solver_task], mapping=official_env.mapping)
    task = process(official_env, proposal, [solver], index=0)
    assert isinstance(task, Task), task
    assert len(task.test_cases) == 8 and task.test_cases[1].output == "[3.5]"
    assert "zwc.falekef" in task.reference and "numpy" not in task.reference
    stranger = load_model("reference", tasks=[], mapping=official_env.mapping)
    assert process(official_env, proposal, [stranger], index=1).startswith("solver reference failed")
    naming = parse_proposal(GOOD.replace("report how far", "call np.abs to report how far"), BY_PATH["numpy.abs"])
    assert process(official_env, naming, [solver], index=2) == "problem text names a function"


def test_end_to_end_with_a_transformers_model(official_env, tiny):
    """The tiny random-initialised model proposes and solves: its noise is dropped, counted, and the
    report adds up (what a good proposal becomes is tested above, scripted)."""
    kept, report = generate_llm_tasks(official_env, tiny, [tiny], attempts=2, max_tokens=160)
    assert report.attempts == 2 and report.kept == len(kept)
    assert report.kept + sum(report.dropped.values()) == 2
    assert 0.0 <= report.acceptance_rate <= 1.0
