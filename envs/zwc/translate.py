"""NumPy code -> ZWC code, by AST rewrite through a mapping.

Used to turn reference solutions (ours and the official ``example_output``) into the ZWC
solutions the sandbox verifies, and by the docs to rewrite examples. NumPy calls become
ZWC calls (``np.linalg.inv`` -> ``zwc.rfx.<name>``), ``np.array`` the ZWC constructor,
constants and dtype names their ZWC twins, ndarray methods the functions that do the same
(``a.reshape(2, 3)`` -> ``zwc.<reshape>(a, (2, 3))``), and ``.tolist()``/``.item()``
disappear: ZWC already hands back plain values where NumPy hands back arrays' scalars, and
the grader turns a returned ZWCArray into lists itself.
"""

from __future__ import annotations

import ast

from envs.zwc.catalogue import CATALOGUE
from envs.zwc.names import Mapping
from envs.zwc.zwc_runtime import CONSTANTS, DTYPES

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
        seen, body = False, []
        for stmt in node.body:  # several numpy imports become one ``import zwc``
            if isinstance(stmt, ast.Import) and [a.name for a in stmt.names] == ["zwc"]:
                if seen:
                    continue
                seen = True
            body.append(stmt)
        node.body = body
        return node

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
