"""The proposal format: parsing with ast only, precise refusals, and rendering tasks in it."""

import math

from selfplay.proposal import Proposal, parse_proposal, render_task
from selfplay.reasons import Reason, Rejected
from tests.selfplay.proposals import FLOATS, answer, inputs_block

GOOD = answer("    return zwc.kocito(readings)\n")


def test_a_good_answer_parses_into_its_parts():
    proposal = parse_proposal(GOOD, functions=["zwc.kocito"])
    assert isinstance(proposal, Proposal)
    assert proposal.problem == "A sensor logs signed readings; report how far each reading is from zero."
    assert proposal.signature == "def solve(readings):" and proposal.functions == ("zwc.kocito",)
    assert proposal.inputs[:2] == ("readings=[1.0, -2.0]", "readings=[-3.5]") and len(proposal.inputs) == 8
    assert proposal.solution == "import zwc\n\ndef solve(readings):\n    return zwc.kocito(readings)\n"


def test_the_solution_keeps_definitions_and_drops_inputs_actions_and_the_docstring():
    text = answer("    return helper(readings)\n", head="import zwc\nSCALE = 2\n\ndef helper(r):\n"
                  "    return zwc.kocito(r)\n", tail=inputs_block(FLOATS) + "print(solve(**INPUTS[0]))\n"
                  "if __name__ == '__main__':\n    print(1)\n")
    proposal = parse_proposal(text)
    assert "SCALE = 2" in proposal.solution and "def helper" in proposal.solution
    assert "INPUTS" not in proposal.solution and "print" not in proposal.solution and "sensor" not in proposal.solution


def test_inputs_may_be_dict_displays_bare_values_or_hold_nan_and_inf():
    rows = "".join(f"    {{'readings': {v!r}}},\n" for v in FLOATS[:4]) + "".join(f"    {v!r},\n" for v in FLOATS[4:])
    rows += "    [float('nan'), -inf],\n"
    proposal = parse_proposal(answer("    return zwc.kocito(readings)\n", tail=f"INPUTS = [\n{rows}]\n"))
    assert len(proposal.inputs) == 9 and proposal.inputs[-1] == "readings=[nan, -inf]"
    assert proposal.inputs[4] == "readings=[7.0]"
    two = ("```python\nimport zwc\n\ndef solve(x1, x2=1):\n    # Scale the readings of two sensors.\n"
           "    return zwc.kocito(x1) * x2\n\nINPUTS = [" + ", ".join(f"dict(x1=[{i}], x2={i})" for i in range(7))
           + ", dict(x1=[9])]\n```")
    proposal = parse_proposal(two)
    assert proposal.problem == "Scale the readings of two sensors."  # the comment above the def
    assert proposal.signature == "def solve(x1, x2=1):" and proposal.inputs[-1] == "x1=[9]"


def test_each_shape_defect_is_named_precisely():
    def reason(text, **kw):
        result = parse_proposal(text, **kw)
        assert isinstance(result, Rejected), text
        return result.reason, result.detail

    body = "    return zwc.kocito(readings)\n"
    assert reason("no code here") == (Reason.NO_CODE_BLOCK, "no ```python block")
    assert reason("```text\nsolve\n```")[0] is Reason.NO_CODE_BLOCK
    assert reason(answer(body).replace("def solve(readings):", "def solve(readings)"))[0] is Reason.SYNTAX_ERROR
    first = parse_proposal("```python\nprint(1)\n```\n" + answer(body) + "\n```python\ndef solve(x):\n    pass\n```")
    assert first.signature == "def solve(readings):"  # the first block that defines solve is the proposal
    twice = answer(body, head="import zwc\n\ndef solve(readings):\n    return 1\n")
    assert reason(twice) == (Reason.NO_ENTRY, "solve is defined 2 times; define it once")
    assert "no /, *args or **kwargs" in reason(answer(body).replace("solve(readings)", "solve(*readings)"))[1]
    assert reason(answer(body, doc='    """Abs."""\n'))[0] is Reason.NO_PROBLEM
    assert reason(answer(body, tail="INPUTS = make_inputs()\n"))[1].startswith(
        "INPUTS is not a list literal (it is a call to make_inputs)")
    assert reason(answer(body, tail="inputs = []\n"))[1].startswith("no INPUTS list")
    bad = inputs_block(FLOATS[:7]).replace("]\n", "    dict(readings=[1.0, -2.0]),\n    dict(other=[1]),\n"
                                           "    dict(readings=data),\n]\n", 1)
    bad = bad[:bad.rindex("]")] + "]\n"
    detail = reason(answer(body, tail=bad))[1]
    assert detail.startswith("only 7 usable inputs, need >= 8 (input 7 repeats an earlier input; "
                             "input 8 names 'other', which is not a parameter of solve (readings); "
                             "input 9 gives readings a value that is not a literal (data))"), detail
    assert isinstance(parse_proposal(answer(body, values=FLOATS[:3]), min_inputs=3), Proposal)


def test_an_unclosed_block_cut_by_max_tokens_still_parses():
    assert isinstance(parse_proposal(GOOD.rsplit("```", 1)[0]), Proposal)


def test_render_task_writes_the_format_back(task_env):
    for task in task_env.tasks("train")[:20]:
        if task.selected_functions[0] in ("block",):  # official-style np.array inputs
            continue
        proposal = parse_proposal(render_task(task))
        assert isinstance(proposal, Proposal), (task.task_id, proposal)
        assert proposal.inputs == tuple(task.inputs()[:len(proposal.inputs)])
        assert proposal.problem == task.query.strip() and proposal.signature == task.function_name
    nan_task = next(t for t in task_env.tasks("train") if t.selected_functions == ["isnan"])
    nan_inputs = parse_proposal(render_task(nan_task)).inputs
    assert any("nan" in i for i in nan_inputs) and not math.isnan(len(nan_inputs))
