"""ZWC code -> NumPy code (translate_zwc): the NumPy twin self-play checks a proposal against."""

from envs.zwc.library.names import Mapping
from envs.zwc.library.translate import translate_numpy, translate_zwc

MAPPING = Mapping.generate(3)
Z = {e.numpy: e.zwc for e in MAPPING}


def test_every_way_of_naming_zwc_becomes_numpy():
    mean, inv, eig = Z["numpy.mean"], Z["numpy.linalg.inv"], Z["numpy.linalg.eig"]
    rfx_inv = inv.split(".", 1)[1]
    code = (f"import zwc\nimport zwc as z\nfrom zwc import {mean.split('.')[-1]} as m\nfrom zwc import rfx\n"
            f"import math\n\ndef solve(a):\n    x = {mean}(a) + z.pi + m(a)\n    y = rfx.{inv.split('.')[-1]}(a)\n"
            f"    w = zwc.{rfx_inv}(a)\n    v = {eig}(a)\n    t = {Z['numpy.zeros']}(3, dtype=zwc.float64)\n"
            f"    ok = isinstance(y, zwc.ZWCArray)\n    return (x, y, w, v, t, ok, zwc.bool_, zwc.newaxis)\n")
    numpy = translate_zwc(code, MAPPING)
    assert "zwc" not in numpy
    assert numpy.startswith("import numpy\nimport math\n")
    assert "numpy.mean(a) + numpy.pi + numpy.mean(a)" in numpy
    assert "y = numpy.linalg.inv(a)" in numpy and "w = numpy.linalg.inv(a)" in numpy
    assert "v = tuple(numpy.linalg.eig(a))" in numpy  # a plain tuple, as zwc gives
    assert "numpy.zeros(3, dtype='float64')" in numpy and "isinstance(y, numpy.ndarray)" in numpy
    assert "'bool', numpy.newaxis)" in numpy


def test_renamed_functions_call_what_zwc_calls():
    assert "numpy.trapezoid(y)" in translate_zwc(f"import zwc\n\ndef solve(y):\n    return {Z['numpy.trapz']}(y)\n",
                                                   MAPPING)


def test_it_undoes_translate_numpy():
    source = "import numpy as np\n\ndef solve(a, b):\n    return np.add(np.linalg.det(a), np.sum(b))\n"
    there = translate_numpy(source, MAPPING)
    back = translate_zwc(there, MAPPING)
    assert back == "import numpy\n\ndef solve(a, b):\n    return numpy.add(numpy.linalg.det(a), numpy.sum(b))\n"
    assert translate_numpy(back, MAPPING) == there
