"""Prompts per mode, and reading code and search requests out of model output."""

from __future__ import annotations

import re

from envs.zwc import Observation

SYSTEM = ("You are an expert Python programmer. Solve the task by writing one Python function. "
          "Answer with a single ```python code block.")
LIBRARY = {
    "closed": "Use the Python library `zwc` (import it with `import zwc`). Do not use numpy.",
    "open": "Use the Python library `zwc` (import it with `import zwc`). Do not use numpy. "
            "Its documentation for this task follows.",
    "search": "Use the Python library `zwc` (import it with `import zwc`). Do not use numpy. You may search "
              "its documentation first: write a ```search block with a short query and wait for the results.",
    "numpy": "Use NumPy (`import numpy as np`).",
}
_CODE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_SEARCH = re.compile(r"```search[ \t]*\n(.*?)```", re.DOTALL)


def first_prompt(obs: Observation, context: str = "") -> list[dict[str, str]]:
    parts = [LIBRARY[obs.mode]]
    if obs.docs:
        parts.append("Documentation:\n" + obs.docs)
    if context:
        parts.append(context)
    parts.append(f"Task:\n{obs.question}")
    parts.append(f"Complete this function:\n{obs.signature}")
    if obs.example_input:
        parts.append(f"Example: with {obs.example_input} the result is {obs.example_output}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def extract_code(text: str) -> str:
    """The first fenced Python block; a bare ``def`` answer counts too; '' when there is none."""
    for match in _CODE.finditer(text):
        if not text[max(0, match.start() - 1):match.start() + 9].startswith(("```search", "`search")):
            code = match.group(1).strip()
            if code:
                return code + "\n"
    return text.strip() + "\n" if re.search(r"^\s*(?:import|from|def)\s", text, re.MULTILINE) else ""


def extract_search(text: str) -> str:
    match = _SEARCH.search(text)
    return match.group(1).strip() if match else ""


def feedback(verdict_detail: str, failure: str) -> str:
    return (f"Your code failed ({failure}): {verdict_detail[:600]}\n"
            "Fix it and answer again with a single ```python code block.")
