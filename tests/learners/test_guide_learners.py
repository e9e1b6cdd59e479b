"""The guide's parametric learner (docs/write-a-learner.md, docs/examples/one_step.py) as a user
would ship it: installed as a package with its own entry point, then exactly the guide's two
commands, on a tiny model (mechanics, not skill): it evolves, writes RUN/model with weights that
moved, and ``sebench eval --run`` evaluates that model."""

from __future__ import annotations

import json

from tests.packaging import ROOT, install, sebench

ENTRY_POINTS = "[sebench.learners]\none-step = my_package.one_step:OneStep\n"


def test_the_guides_parametric_learner_evolves_and_evaluates_from_the_shell(task_env, tiny_dir, tmp_path):
    import torch
    from safetensors.torch import load_file

    source = (ROOT / "docs" / "examples" / "one_step.py").read_text()
    site = install(tmp_path / "site", "my-package", {"my_package.one_step": source}, ENTRY_POINTS)
    run = tmp_path / "RUN"
    listed = sebench(site, "learners")
    assert listed.returncode == 0 and "my_package.one_step:OneStep" in listed.stdout
    evolved = sebench(site, "evolve", "--learner", "one-step", "--zwc", str(task_env.root), "--model", str(tiny_dir),
                      "--out", str(run), "--set", "steps=1", "--limit", "3")
    assert evolved.returncode == 0, evolved.stdout[-3000:] + evolved.stderr[-3000:]
    before, after = load_file(tiny_dir / "model.safetensors"), load_file(run / "model" / "model.safetensors")
    moved = [name for name in before if not torch.equal(before[name], after[name])]
    assert len(moved) == len(before), f"unchanged: {sorted(set(before) - set(moved))}"  # every parameter had a gradient
    results = run / "closed.jsonl"
    evaluated = sebench(site, "eval", "--zwc", str(task_env.root), "--run", str(run), "--limit", "4", "--n", "1",
                        "--max-tokens", "8", "--out", str(results))
    assert evaluated.returncode == 0, evaluated.stdout[-3000:] + evaluated.stderr[-3000:]
    assert len(results.read_text().splitlines()) == 4
    [config] = run.glob("closed*config.json")
    assert json.loads(config.read_text())["config"]["model"].endswith("RUN/model")  # the trained model answered
