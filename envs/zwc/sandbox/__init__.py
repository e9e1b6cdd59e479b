"""The sandbox: where untrusted candidate code runs, and the processes that confine it.

Holds the pool and its fork servers (``pool.py``, ``forkserver.py``, ``zygote.py``,
``child_process.py``), what runs inside a confined child (``child.py``, ``sessions.py``,
``state.py``, ``kernel_walls.py``, ``raw_memory.py``, ``workdirs.py``), the candidate's ``zwc``
stub (``zwc_stub.py``), and the library process that alone holds NumPy and the real zwc and
writes the call log the grader reads (``library_server.py``, ``library_child.py``,
``library_messages.py``, ``provenance.py``, ``perturb.py``), joined to the candidate by
``wire.py``. The grader trusts only what the harness and the library write here, never the
candidate's own process. Empty on purpose: the stub fork server imports this package and must
stay small.
"""
