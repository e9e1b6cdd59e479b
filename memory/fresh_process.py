"""The persist check's second half: the store reopened on its path in a fresh Python process.

``locate`` finds a factory again by name (module and qualname, or the file it was loaded from);
``REOPEN`` is the child's script: it builds the store on the same path with the same embedder and
reports what it reads back, so a store that only kept its items in process memory fails.
"""

from __future__ import annotations

import importlib.machinery
import sys
from typing import Any


def locate(factory: Any) -> tuple[str | None, str | None, str] | None:
    """(module, file, qualname) that find ``factory`` again in a fresh process, or None."""
    module, qualname = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    source = sys.modules.get(module) if module else None
    if source is None or not qualname or "<" in qualname or module == "__main__":
        return None
    value: Any = source
    for part in qualname.split("."):
        value = getattr(value, part, None)
    if value is not factory:
        return None
    top = module.partition(".")[0]  # find_spec(module) would answer from sys.modules, even for a file loaded by path
    if top in sys.builtin_module_names or importlib.machinery.PathFinder.find_spec(top) is not None:
        return module, None, qualname
    file = getattr(source, "__file__", None)
    return (None, file, qualname) if file else None


REOPEN = """
import importlib, importlib.util, json, sys
from pathlib import Path
import numpy as np
from memory.embed import Embedder
a = json.loads(sys.argv[1])
if a["file"]:
    spec = importlib.util.spec_from_file_location("sebench_store_factory", a["file"])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
else:
    module = importlib.import_module(a["module"])
factory = module
for part in a["qualname"].split("."):
    factory = getattr(factory, part)
store = factory(Path(a["path"]), Embedder(a["embedder"]))
item = store.get("m")
hits = store.search(np.asarray(a["vector"], dtype=np.float32), k=1, where={"kind": "rule"})
print(json.dumps({"len": len(store), "get": [item.text, item.metadata] if item else None,
                  "top": hits[0].id if hits else None}))
store.close()
"""
