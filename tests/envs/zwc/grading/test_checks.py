"""Static checks: the official usage rule, NumPy detection, and the wall around zwc."""

import pytest

from envs.zwc.grading.checks import Reason, check_code
from envs.zwc.grading.verdict import Failure
from envs.zwc.library.names import Mapping
from envs.zwc.library.package import public_names


@pytest.fixture(scope="module")
def names(api_doc):
    return public_names(Mapping.from_sebench_v1(api_doc))


def _reason(code, names, entry="solve", numpy_mode=False):
    rejection = check_code(code, entry, names, numpy_mode=numpy_mode)
    return None if rejection is None else rejection.reason


ACCEPTED = [
    "import zwc\ndef solve(x):\n    return zwc.kocito(x)",
    "import zwc as z\ndef solve(x):\n    return z.rfx.quvohe(x)",
    "from zwc import kocito\ndef solve(x):\n    return kocito(x)",
    "from zwc import rfx\ndef solve(x):\n    return rfx.quvohe(x)",
    "import zwc\ndef solve(x):\n    out = []\n    for row in x:\n        out.append(zwc.kocito(row))\n    return out",
    "import zwc\ndef helper(x):\n    return zwc.kocito(x)\ndef solve(x):\n    y = helper(x)\n    return [y]",
    "import zwc\ndef solve(x):\n    a = zwc.yitaf(x)\n    b, c = a + 1, 2\n    return b",
    "import zwc, math\nfrom typing import List\ndef solve(x: List[float]):\n    '''Docstring mentioning numpy is fine.'''\n"
    "    return math.sqrt(zwc.kocito(x))",
    "import zwc\ndef solve(x):\n    return zwc.kocito(x)\nif __name__ == '__main__':\n    print(solve([1.0]))",
    "import zwc\ndef solve(x, _):\n    _ = 1\n    return zwc.kocito(x)",
    # the value may depend on zwc only through a condition: run time decides whether zwc ran
    "import zwc\ndef solve(x):\n    return [v for v in x if zwc.kocito([v]) > 0]",
    "import zwc\ndef solve(x):\n    zwc.kocito(x)\n    return 0",
    # hasattr with a literal public name is honest code
    "import zwc\ndef solve(x):\n    return zwc.kocito(x) if hasattr(x, 'shape') else 0",
    # zwc called from a method of the candidate's own class
    "import zwc\nclass Stats:\n    def run(self, x):\n        return zwc.kocito(x)\ndef solve(x):\n    return Stats().run(x)",
    # attributes of the candidate's own objects may be written
    "import zwc\nclass Box:\n    pass\ndef solve(x):\n    b = Box()\n    b.v = zwc.kocito(x)\n    return b.v",
]


@pytest.mark.parametrize("code", ACCEPTED)
def test_accepted(code, names):
    assert _reason(code, names) is None


REJECTED = [
    ("", Reason.EMPTY),
    ("def solve(x) return", Reason.SYNTAX),
    ("import zwc\ndef other(x):\n    return zwc.kocito(x)", Reason.NO_ENTRY),
    ("import numpy as np\ndef solve(x):\n    return np.mean(x)", Reason.NUMPY_IMPORT),
    ("from numpy import mean\ndef solve(x):\n    return mean(x)", Reason.NUMPY_IMPORT),
    ("import zwc\ndef solve(x):\n    return np.mean(x)", Reason.NUMPY_NAME),
    ("import zwc\ndef solve(x):\n    return sum(x)", Reason.NO_ZWC_CALL),
    ("def solve(x):\n    return sum(x)", Reason.NO_ZWC_IMPORT),
    ("import zwc\ndef solve(x):\n    f = zwc.kocito\n    return sum(x)", Reason.NO_ZWC_CALL),
    ("import zwc\ndef solve(x):\n    return hasattr(zwc, '_runtime')", Reason.FORBIDDEN_BUILTIN),
    ("import zwc\ndef solve(x):\n    n = '_' + 'runtime'\n    return hasattr(zwc, n)", Reason.FORBIDDEN_BUILTIN),
    ("import zwc\ndef solve(x):\n    h = hasattr\n    return h(zwc.kocito, 'x')", Reason.FORBIDDEN_BUILTIN),
    ("import zwc\ndef solve(x):\n    return hasattr(zwc.kocito(x), 'f_globals')", Reason.FORBIDDEN_BUILTIN),
    ("import zwc, json\ndef solve(x):\n    json.JSONEncoder.encode = len\n    return zwc.kocito(x)",
     Reason.MODULE_WRITE),
    ("import zwc\ndef solve(x):\n    zwc.kocito = sum\n    return zwc.kocito(x)", Reason.MODULE_WRITE),
    ("import zwc\nfrom statistics import mean\ndef solve(x):\n    mean.n = 1\n    return zwc.kocito(x)",
     Reason.MODULE_WRITE),
    ("import zwc, math\ndef solve(x):\n    del math.pi\n    return zwc.kocito(x)", Reason.MODULE_WRITE),
    ("import zwc\ndef solve(x):\n    return zwc.mean(x)", Reason.UNKNOWN_ZWC_NAME),
    ("from zwc import mean\ndef solve(x):\n    return mean(x)", Reason.UNKNOWN_ZWC_NAME),
    ("import zwc\ndef solve(x):\n    return zwc.rfx.inv(x)", Reason.UNKNOWN_ZWC_NAME),
    ("import zwc\ndef solve(x):\n    return zwc.kocito(x)._zwc_nd", Reason.PRIVATE_ATTRIBUTE),
    ("import zwc\ndef solve(x):\n    return zwc.kocito.__call__(x)", Reason.DUNDER_NAME),
    ("import zwc._runtime\ndef solve(x):\n    return zwc.kocito(x)", Reason.PRIVATE_IMPORT),
    ("from zwc import _runtime\ndef solve(x):\n    return zwc.kocito(x)", Reason.PRIVATE_IMPORT),
    ("import zwc, os\ndef solve(x):\n    return zwc.kocito(x)", Reason.FORBIDDEN_IMPORT),
    ("import zwc, string\ndef solve(x):\n    return zwc.kocito(x)", Reason.FORBIDDEN_IMPORT),
    ("import zwc\ndef solve(x):\n    return getattr(zwc, 'kocito')(x)", Reason.FORBIDDEN_BUILTIN),
    ("import zwc\ndef solve(x):\n    return eval('zwc.kocito')(x)", Reason.FORBIDDEN_BUILTIN),
    ("import zwc\ndef solve(x):\n    return zwc.kocito(x) if '{0.__class__}'.format(x) else 0", Reason.DUNDER_STRING),
    ("import zwc\ndef solve(x):\n    t = '{0.' + 'a}'\n    return zwc.kocito(x) if t.format(x) else 0", Reason.COMPUTED_FORMAT),
    ("import zwc, operator\ndef solve(x):\n    return operator.attrgetter('a')(zwc)(x)", Reason.REFLECTION),
    ("import zwc\ndef solve(x):\n    g = (i for i in x)\n    return zwc.kocito(g.gi_frame)", Reason.REFLECTION),
    ("import zwc\nclass A:\n    def __init__(self):\n        pass\ndef solve(x):\n    return zwc.kocito(x)", Reason.DUNDER_NAME),
]


@pytest.mark.parametrize(("code", "reason"), REJECTED, ids=[r.value for _, r in REJECTED])
def test_rejected(code, reason, names):
    assert _reason(code, names) is reason


def test_failure_classes(names):
    assert check_code("import numpy\ndef solve(x):\n    return x", "solve", names).failure is Failure.NUMPY_USED
    assert check_code("import os\ndef solve(x):\n    return x", "solve", names).failure is Failure.BYPASS_ATTEMPT
    assert check_code("import zwc\ndef solve(x):\n    return zwc.foo(x)", "solve", names).failure is Failure.UNKNOWN_API
    rejection = check_code("import zwc\n\ndef solve(x):\n    return zwc.kocito(x).__class__", "solve", names)
    assert rejection.line == 4 and "__class__" in str(rejection)


def test_numpy_mode_allows_numpy_but_keeps_the_wall(names):
    ok = "import numpy as np\ndef solve(x):\n    return np.mean(x)"
    assert _reason(ok, names, numpy_mode=True) is None
    assert _reason("import numpy as np\ndef solve(x):\n    return np.mean.__globals__", names,
                   numpy_mode=True) is Reason.DUNDER_NAME
    assert _reason("import os\ndef solve(x):\n    return 1", names, numpy_mode=True) is Reason.FORBIDDEN_IMPORT
