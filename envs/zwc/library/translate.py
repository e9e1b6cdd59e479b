"""NumPy code -> ZWC code, by AST rewrite through a mapping.

Used to turn reference solutions (ours and the official ``example_output``) into the ZWC
solutions the sandbox verifies, and by the docs to rewrite examples. NumPy calls become
ZWC calls (``np.linalg.inv`` -> ``zwc.rfx.<name>``), ``np.array`` the ZWC constructor,
constants and dtype names their ZWC twins, ndarray methods the functions that do the same
(``a.reshape(2, 3)`` -> ``zwc.<reshape>(a, (2, 3))``), and ``.tolist()``/``.item()``
disappear: ZWC already hands back plain values where NumPy hands back arrays' scalars, and
the grader turns a returned ZWCArray into lists itself.

``translate_zwc`` goes the other way, for self-play: a proposed ZWC solution's NumPy twin
runs in the NumPy control, and a task is kept only if the two agree.
"""

from __future__ import annotations

import ast

from envs.zwc.library.catalogue import BY_PATH, CATALOGUE
from envs.zwc.library.names import SUBMODULE, Mapping
from envs.zwc.library.shared import CONSTANTS, DTYPES

# ndarray methods and attributes ZWCArray does not offer -> the function that does the same
METHODS = {m: m for m in ("reshape", "sum", "mean", "max", "min", "prod", "std", "var", "any", "all",
                          "argmax", "argmin", "cumsum", "cumprod", "copy", "transpose", "ravel", "astype",
                          "round", "clip", "dot", "trace", "diagonal", "repeat", "take", "squeeze",
                          "swapaxes", "nonzero", "argsort", "conj", "conjugate", "ptp", "searchsorted")}
METHODS["flatten"] = "ravel"
SHAPE_VARARGS = {"reshape", "transpose"}  # a.reshape(2, 3) is reshape(a, (2, 3))
ATTRIBUTES = {"T": "transpose", "real": "real", "imag": "imag"}
DROPPED_METHODS = {"tolist", "item"}
RENAMED = {e.target: e.numpy for e in CATALOGUE if e.target}  # numpy.trapezoid is what zwc calls trapz


def short_names(mapping: Mapping) -> dict[str, str]:
    """NumPy top-level short name -> ZWC short name (top level wins over linalg)."""
    names: dict[str, str] = {}
    for e in mapping:
        short = e.numpy.rsplit(".", 1)[1]
        if not e.numpy.startswith("numpy.linalg."):
            names[short] = e.short
    return names


def _zwc_attr(path: str) -> ast.expr:
    node: ast.expr = ast.Name("zwc", ast.Load())
    for part in path.split(".")[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node


class MethodsToFunctions(ast.NodeTransformer):
    """``x.sum()`` -> ``zwc.<sum>(x)``; ``x.T`` -> ``zwc.<transpose>(x)``; ``.tolist()`` dropped."""

    def __init__(self, bare: dict[str, str], drop_conversions: bool = False):
        self.bare = bare
        self.drop_conversions = drop_conversions
        self.changed = False

    def _zwc_call(self, name: str, args: list[ast.expr], keywords: list[ast.keyword]) -> ast.Call:
        return ast.Call(func=_zwc_attr(f"zwc.{self.bare[name]}"), args=args, keywords=keywords)

    @staticmethod
    def _on_module(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in ("zwc", "np", "numpy")

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Attribute) or self._on_module(func.value):
            return node
        if self.drop_conversions and func.attr in DROPPED_METHODS and not node.args:
            self.changed = True
            return func.value
        if METHODS.get(func.attr) in self.bare:
            args = list(node.args)
            if func.attr in SHAPE_VARARGS and len(args) > 1:
                args = [ast.Tuple(elts=args, ctx=ast.Load())]
            self.changed = True
            return self._zwc_call(METHODS[func.attr], [func.value, *args], node.keywords)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if (node.attr in ATTRIBUTES and ATTRIBUTES[node.attr] in self.bare and isinstance(node.ctx, ast.Load)
                and not self._on_module(node.value)):
            self.changed = True
            return self._zwc_call(ATTRIBUTES[node.attr], [node.value], [])
        return node


class _NumpyToZwc(ast.NodeTransformer):
    """Module aliases of NumPy and the names they lead to -> ZWC."""

    def __init__(self, mapping: Mapping):
        self.mapping = mapping
        self.aliases: set[str] = set()  # local names bound to numpy
        self.linalg_aliases: set[str] = set()
        self.imported: dict[str, str] = {}  # from numpy import mean -> {"mean": "zwc.kocito"}

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self.generic_visit(node)
        return _one_import(node, "zwc")  # several numpy imports become one ``import zwc``

    def visit_Import(self, node: ast.Import) -> ast.AST:
        keep = []
        for alias in node.names:
            if alias.name == "numpy" or alias.name.startswith("numpy."):
                local = alias.asname or "numpy"
                (self.linalg_aliases if alias.name == "numpy.linalg" and alias.asname else self.aliases).add(local)
            else:
                keep.append(alias)
        node.names = [*keep, ast.alias("zwc")] if len(keep) < len(node.names) else keep
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if not (node.module or "").startswith("numpy"):
            return node
        linalg = node.module == "numpy.linalg"
        for alias in node.names:
            if alias.name == "linalg" and not linalg:
                self.linalg_aliases.add(alias.asname or "linalg")
                continue
            path = f"numpy.linalg.{alias.name}" if linalg else f"numpy.{alias.name}"
            if path in self.mapping:
                self.imported[alias.asname or alias.name] = self.mapping.to_zwc(path)
        return ast.Import(names=[ast.alias("zwc")])

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        chain, root = [], node
        while isinstance(root, ast.Attribute):
            chain.append(root.attr)
            root = root.value
        if not isinstance(root, ast.Name):
            return self.generic_visit(node)
        chain.reverse()
        if root.id in self.linalg_aliases:
            chain = ["linalg", *chain]
        elif root.id not in self.aliases:
            return self.generic_visit(node)
        path = "numpy." + ".".join(chain)
        path = RENAMED.get(path, path)
        if path in self.mapping:
            return ast.copy_location(_zwc_attr(self.mapping.to_zwc(path)), node)
        if len(chain) == 1 and (chain[0] in CONSTANTS or chain[0] in DTYPES or chain[0] == "ndarray"):
            name = {"bool": "bool_", "ndarray": "ZWCArray"}.get(chain[0], chain[0])
            return ast.copy_location(_zwc_attr(f"zwc.{name}"), node)
        if chain[0] == "linalg":
            chain[0] = "rfx"
        return ast.copy_location(_zwc_attr("zwc." + ".".join(chain)), node)  # unknown: check will say so

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.imported and isinstance(node.ctx, ast.Load):
            return ast.copy_location(_zwc_attr(self.imported[node.id]), node)
        return node


def translate_numpy(code: str, mapping: Mapping) -> str:
    """ZWC source for NumPy source ``code`` (raises SyntaxError for code that does not parse)."""
    tree = ast.parse(code)
    tree = _NumpyToZwc(mapping).visit(tree)
    tree = MethodsToFunctions(short_names(mapping), drop_conversions=True).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# -- the reverse: ZWC code -> NumPy code (the NumPy twin of a proposed ZWC solution) --------
# zwc names that are not catalogued functions, and what stands for them in NumPy code
ZWC_SPECIAL = {"ZWCArray": "numpy.ndarray", "ZWCError": "Exception", SUBMODULE: "numpy.linalg"}
# NumPy returns these as named tuples (EigResult, ...), zwc as plain tuples; the sandbox records
# only exact built-in types, so the twin converts them as zwc does
NAMED_TUPLE_RESULTS = frozenset({"numpy.linalg.eig", "numpy.linalg.eigh", "numpy.linalg.qr",
                                 "numpy.linalg.slogdet", "numpy.linalg.svd"})


def _dotted_node(path: str) -> ast.expr:
    first, *rest = path.split(".")
    node: ast.expr = ast.Name(first, ast.Load())
    for part in rest:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node


class _ZwcToNumpy(ast.NodeTransformer):
    """``import zwc`` -> ``import numpy``; every zwc name -> the NumPy object it wraps."""

    def __init__(self, mapping: Mapping):
        self.mapping = mapping
        self.modules: dict[str, str] = {}  # local name -> zwc module path ("zwc", "zwc.rfx")
        self.imported: dict[str, str] = {}  # from zwc import kocito as k -> {"k": "zwc.kocito"}

    def numpy_node(self, zwc_path: str) -> ast.expr | None:
        """The NumPy expression for a zwc path (a dtype becomes its name: zwc's dtypes are
        strings, which NumPy accepts wherever it takes a dtype); None when unknown."""
        if zwc_path in self.mapping:
            numpy_path = self.mapping.to_numpy(zwc_path)
            return _dotted_node(BY_PATH[numpy_path].call_target if numpy_path in BY_PATH else numpy_path)
        parts = zwc_path.split(".")
        if parts[0] != "zwc" or len(parts) != 2:
            return None
        name = parts[1]
        if name in ZWC_SPECIAL:
            return _dotted_node(ZWC_SPECIAL[name])
        if name in CONSTANTS:
            return _dotted_node(f"numpy.{name}")
        if name in DTYPES or name == "bool_":
            return ast.Constant(name.rstrip("_"))
        return None

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self.generic_visit(node)
        return _one_import(node, "numpy")  # several zwc imports become one ``import numpy``

    def visit_Import(self, node: ast.Import) -> ast.AST:
        keep = [alias for alias in node.names if not (alias.name == "zwc" or alias.name.startswith("zwc."))]
        for alias in node.names:
            if alias not in keep:
                self.modules[alias.asname or "zwc"] = alias.name if alias.asname else "zwc"
        node.names = [*keep, ast.alias("numpy")] if len(keep) < len(node.names) else keep
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        module = node.module or ""
        if node.level or not (module == "zwc" or module.startswith("zwc.")):
            return node
        for alias in node.names:
            path, local = f"{module}.{alias.name}", alias.asname or alias.name
            (self.modules if path == f"zwc.{SUBMODULE}" else self.imported)[local] = path
        return ast.Import(names=[ast.alias("numpy")])

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        chain, root = [], node
        while isinstance(root, ast.Attribute):
            chain.append(root.attr)
            root = root.value
        if isinstance(root, ast.Name) and isinstance(node.ctx, ast.Load):
            base = self.modules.get(root.id) or self.imported.get(root.id)
            if base is not None:
                chain.reverse()
                for cut in range(len(chain), 0, -1):  # the longest zwc path that names something
                    found = self.numpy_node(".".join([base, *chain[:cut]]))
                    if found is not None:
                        for attr in chain[cut:]:
                            found = ast.Attribute(value=found, attr=attr, ctx=ast.Load())
                        return ast.copy_location(found, node)
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if ast.unparse(node.func) in NAMED_TUPLE_RESULTS:
            return ast.copy_location(ast.Call(func=ast.Name("tuple", ast.Load()), args=[node], keywords=[]), node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        path = self.modules.get(node.id) or self.imported.get(node.id)
        if path is None or not isinstance(node.ctx, ast.Load):
            return node
        found = _dotted_node("numpy") if path == "zwc" else self.numpy_node(path)
        return ast.copy_location(found, node) if found is not None else node


def translate_zwc(code: str, mapping: Mapping) -> str:
    """NumPy source for ZWC source ``code``: the twin the NumPy control runs, to check that a
    ZWC program means what NumPy means (raises SyntaxError for code that does not parse)."""
    tree = _ZwcToNumpy(mapping).visit(ast.parse(code))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _one_import(node: ast.Module, module: str) -> ast.Module:
    """Keep the first top-level ``import MODULE`` of a translated module, drop the repeats."""
    seen, body = False, []
    for stmt in node.body:
        if isinstance(stmt, ast.Import) and [a.name for a in stmt.names] == [module]:
            if seen:
                continue
            seen = True
        body.append(stmt)
    node.body = body
    return node
