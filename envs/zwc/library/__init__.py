"""The library: ZWC itself, NumPy behind random names, and its docs.

Holds the catalogue of exposed functions (``catalogue.py``), the name mapping (``names.py``,
``data/``), the generated ``zwc`` package and its runtime (``package.py``, ``runtime.py``, with
``shared.py``: what the runtime and the sandbox's stub define alike), NumPy -> ZWC code
translation (``translate.py``) and the rewritten docs (``docs.py``, ``doc_examples.py``). The
grader and the sandbox trust it as the definition of ZWC; nothing here runs candidate code.
Empty on purpose: the sandbox's stub server imports ``shared.py`` and must not import NumPy.
"""
