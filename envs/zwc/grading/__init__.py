"""The grading: from candidate code and the sandbox's records to a Verdict.

Holds the static checks run before anything executes (``checks.py``), value equality and the
official printed-output parser (``equality.py``), the decoding and judging of the sandbox's
answer (``grade.py``), zwc usage and dependence judged from the library's call log
(``usage.py``, ``dependence.py``, ``counterfactual.py``), and the verdict with its failure
classes (``verdict.py``, ``failure.py``). It runs in the grader's own process and trusts the
harness's records and the library's log, never the candidate's claims. Empty on purpose: the
sandbox's fork servers import ``checks.py`` and ``failure.py`` and must stay small.
"""
