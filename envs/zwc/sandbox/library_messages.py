"""Error messages the library sends back: built from fixed parts, so they carry no information
about names.

NumPy's messages (and the runtime's translation of them) echo what they were given
(``data type 'kocito' not understood``, ``Invalid format specifier '...'``) and name NumPy's
functions (``ufunc 'add'``, ``_amax_dispatcher``); any rewriting of such text that treats zwc
or NumPy names differently from other words is an oracle: a program could learn which of its
words are zwc names, or which NumPy function a zwc name runs, with no unknown name asked for.
So no text of NumPy's or the candidate's reaches the candidate. A message is made only of

* the call: the zwc name the candidate called, as typed (its aliases read as it), or the
  array operation (``ZWCArray.__add__``), then each argument's Python type by position and
  keyword (``zwc.kocito(ZWCArray, str, axis=int)``; keyword names are the candidate's own, as
  written, never rewritten);
* one template of ``TEMPLATES`` (NumPy's common messages, in NumPy's words where those name
  no function) that the whole text matched, whose holes hold only integers, shapes, Python
  type and dtype names of a fixed list, or a word of ``WORDS`` (parameter names, casting
  rules; any other word reads ``?``);
* else one fixed sentence per exception class (``FALLBACK``).

The same message for any word the candidate wrote that is not in those fixed lists (which
hold no zwc name and no NumPy function name: ``test_redteam_messages.py``), so a zwc name,
a NumPy name and any other word are told apart by no message.
"""

from __future__ import annotations

import re

MAX_ARGUMENTS = 8  # argument types shown; more read "..."
MAX_TEXT = 2000  # a longer text is matched by its two ends (bounds the matching's time)
TYPES = ("str", "int", "float", "complex", "bool", "list", "tuple", "dict", "set", "frozenset", "NoneType",
         "object", "bytes", "bytearray", "range", "slice", "function", "builtin_function_or_method", "method",
         "ellipsis", "type", "ZWCArray", "zwc.ZWCArray", "zwc.str_", "zwc.bytes_", "zwc.bool", "zwc.int64",
         "zwc.float64", "zwc.complex128", "zwc.object_", "None")
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "longdouble", "complex64", "complex128", "clongdouble", "object", "str",
          "bytes", "void", "datetime64", "timedelta64")
# parameter names, casting rules and orders: no zwc name, no NumPy function name (tested)
WORDS = frozenset({
    "a", "b", "x", "y", "v", "m", "n", "p", "q", "k", "f", "w", "x1", "x2", "a1", "a2", "ar", "ar1", "ar2", "arr",
    "ary", "arys", "arrays", "axis", "axes", "axis1", "axis2", "axisa", "axisb", "axisc", "dtype", "out", "order",
    "casting", "keepdims", "ddof", "ord", "decimals", "weights", "bins", "side", "sorter", "kth", "condition",
    "condlist", "choicelist", "choices", "funclist", "repeats", "reps", "shift", "start", "stop", "step", "num",
    "endpoint", "retstep", "base", "initial", "fill_value", "new_shape", "pad_width", "mode", "method", "kind",
    "rcond", "hermitian", "rtol", "atol", "tol", "equal_nan", "UPLO", "upper", "full_matrices", "compute_uv",
    "obj", "values", "vals", "val", "offset", "xp", "fp", "left", "right", "period", "deg", "rowvar", "bias",
    "fweights", "aweights", "minlength", "edge_order", "otypes", "excluded", "signature", "pyfunc", "ndmin",
    "ndmax", "subok", "source", "destination", "src", "dst", "indexing", "sparse", "return_index",
    "return_inverse", "return_counts", "return_indices", "assume_unique", "overwrite_input", "density",
    "prepend", "precision", "separator", "prefix", "suffix", "threshold", "width", "discont", "posinf",
    "neginf", "tup", "ind", "xi", "dx", "varargs", "no", "equiv", "safe", "same_kind", "unsafe", "C", "F", "A",
    "K", "L", "U",
})
_DTYPE = "|".join(DTYPES) + r"|[<>|=]?[biufcmMOSUV?]\d*"
_HOLES = {
    "N": r"-?\d+",  # an integer
    "S": r"\([\d, ]*\)",  # a shape
    "SS": r"\([\d, ]*\)(?: +\([\d, ]*\))*",  # shapes
    "T": "|".join(sorted(TYPES, key=len, reverse=True)),  # a Python type name
    "D": _DTYPE,  # a dtype
    "DD": rf"\(dtype\('(?:{_DTYPE})'\)(?:, dtype\('(?:{_DTYPE})'\))*\)",  # a tuple of dtypes
    "W": r"[A-Za-z_][A-Za-z0-9_]*",  # a word: itself if in WORDS, else '?'
    "_": r".*?",  # dropped: text of NumPy's or the candidate's
}

# (NumPy's message with holes, the message the candidate reads: {0}, {1}... the kept holes in
# order; None: the first text itself, holes filled). First match wins.
_TABLE: list[tuple[str, str | None]] = [
    # broadcasting and shapes
    ("operands could not be broadcast together with shapes {SS}", None),
    ("operands could not be broadcast together with shape {SS}",
     "operands could not be broadcast together with shapes {0}"),
    ("operands could not be broadcast together with remapped shapes [original->remapped]: {_} and requested shape {S}",
     "operands could not be broadcast to the requested shape {0}"),
    ("could not broadcast input array from shape {S} into shape {S}", None),
    ("shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg {N} with shape {S} "
     "and arg {N} with shape {S}.", "shape mismatch: objects cannot be broadcast to a single shape: argument {0} "
     "has shape {1} and argument {2} has shape {3}"),
    ("cannot broadcast a non-scalar to a scalar array", None),
    ("input operand has more dimensions than allowed by the axis remapping", None),
    ("shapes {S} and {S} not aligned: {N} (dim {N}) != {N} (dim {N})", None),
    ("{_}: Input operand {N} has a mismatch in its core dimension {N}, with gufunc signature {_} (size {N} is "
     "different from {N})",
     "input operand {0} has a mismatch in its core dimension {1} (size {2} is different from {3})"),
    ("{_}: Input operand {N} does not have enough dimensions (has {N}, gufunc core with signature {_} requires {N})",
     "input operand {0} does not have enough dimensions (has {1}, requires {2})"),
    ("cannot reshape array of size {N} into shape {S}", None),
    ("cannot reshape array of size {N} into shape {N}", None),
    ("setting an array element with a sequence. The requested array has an inhomogeneous shape after {N} "
     "dimensions. The detected shape was {S} + inhomogeneous part.", None),
    ("setting an array element with a sequence.{_}", "setting an array element with a sequence"),
    ("all the input array dimensions except for the concatenation axis must match exactly, but along dimension "
     "{N}, the array at index {N} has size {N} and the array at index {N} has size {N}", None),
    ("all the input arrays must have same number of dimensions, but the array at index {N} has {N} dimension(s) "
     "and the array at index {N} has {N} dimension(s)", None),
    ("all input arrays must have the same shape", None),
    ("need at least one array to concatenate", None),
    ("need at least one array to stack", None),
    ("zero-dimensional arrays cannot be concatenated", None),
    ("array split does not result in an equal division", None),
    ("{N}-dimensional array given. Array must be at least two-dimensional", None),
    ("{N}-dimensional array given. Array must be two-dimensional", None),
    ("Last {N} dimensions of the array must be square", None),
    ("Input array must be at least {N}-dimensional, but it is {N}", None),
    ("Input arrays must be one-dimensional, but they are x1.ndim={N} and x2.ndim={N}.", None),
    ("Both input arrays must be (arrays of) {N}-dimensional vectors, but they are {N} and {N} dimensional "
     "instead.", None),
    ("incompatible dimensions for cross product\n(dimension must be {N} or {N})",
     "incompatible dimensions (dimension must be {0} or {1})"),
    ("Incompatible dimensions", None),
    ("{_} requires an array of at least two dimensions", "requires an array of at least two dimensions"),
    ("{_} requires input that is at least one dimensional", "requires input that is at least one dimensional"),
    ("object of too small depth for desired array", None),
    ("object too deep for desired array", None),
    ("maximum supported dimension for an ZWCArray is currently {N}, found {N}", None),
    ("negative dimensions are not allowed", None),
    ("Maximum allowed size exceeded", None),
    ("Input must be {N}- or {N}-d.", None),
    # axes and indices
    ("axis {N} is out of bounds for array of dimension {N}", None),
    ("{W}: axis {N} is out of bounds for array of dimension {N}", None),
    ("index {N} is out of bounds for axis {N} with size {N}", None),
    ("index {N} is out of bounds for array with size {N}", None),
    ("too many indices for array: array is {N}-dimensional, but {N} were indexed", None),
    ("only integers, slices (`:`), ellipsis (`...`), {_}newaxis (`None`) and integer or boolean arrays are valid "
     "indices", "only integers, slices, ellipsis, None and integer or boolean arrays are valid indices"),
    ("arrays used as indices must be of integer (or boolean) type", None),
    ("boolean index did not match indexed array along axis {N}; size of axis is {N} but size of corresponding "
     "boolean axis is {N}", None),
    ("only integer scalar arrays can be converted to a scalar index", None),
    ("kth(={N}) out of bounds ({N})", None),
    ("repeated axis{_}", "repeated axis"),
    ("duplicate value in '{W}'", None),
    ("Duplicate axes given.", None),
    ("Axes must be different.", None),
    ("Axes={S} out of range for array of ndim={N}.", None),
    ("tuple index out of range", None),
    ("list index out of range", None),
    ("cannot do a non-empty take from an empty axes.", None),
    ("'{W}' must be None, an integer or a tuple of integers", None),
    ("{T} indices must be integers or slices, not {T}", None),
    ("{_} indices must be integers, not '{T}'", "indices must be integers, not '{0}'"),
    ("slice indices must be integers or None or have an __index__ method", None),
    # dtypes and conversions
    ("data type {_} not understood", "data type not understood"),
    ("Cannot interpret {_} as a data type", "cannot interpret the argument as a data type"),
    ("data type must provide an itemsize", None),
    ("could not convert string to float: {_}", "could not convert string to float"),
    ("invalid literal for int() with base {N}: {_}", "invalid literal for int() with base {0}"),
    ("complex() arg is a malformed string", None),
    ("int() argument must be a string, a bytes-like object or a real number, not '{T}'", None),
    ("float() argument must be a string or a real number, not '{T}'", None),
    ("must be real number, not {T}", None),
    ("'{T}' object cannot be interpreted as an integer", None),
    ("'{T}' object is not iterable", None),
    ("'{T}' object is not subscriptable", None),
    ("'{T}' object has no attribute {_}", "an argument of type '{0}' is not supported here"),
    ("object of type '{T}' has no len()", None),
    ("{T} is not a sequence", None),
    ("cannot convert float NaN to integer", None),
    ("cannot convert float infinity to integer", None),
    ("integer argument expected, got {T}", None),
    ("Partition index must be integer", None),
    ("exponent must be an integer", None),
    ("Integers to negative integer powers are not allowed.", None),
    ("`pad_width` must be of integral type.", None),
    ("expected a sequence of integers or a single integer, got {_}",
     "expected a sequence of integers or a single integer"),
    ("Field elements must be {_}", "data type not understood"),
    ("Tuple must have size {N}, but has size {N}", None),
    ("ufunc {_} did not contain a loop with signature matching types {DD} -> None",
     "the function has no implementation for the input types {0}"),
    ("ufunc {_} did not contain a loop with signature matching types {_}",
     "the function has no implementation for the input types"),
    ("ufunc {_} not supported for the input types, and the inputs could not be safely coerced to any supported types "
     "according to the casting rule ''safe''", "the function does not support the input types, and the inputs could "
     "not be safely coerced to any supported types according to the casting rule 'safe'"),
    ("Cannot cast ufunc {_} input {N} from dtype('{D}') to dtype('{D}') with casting rule '{W}'",
     "cannot cast input {0} from dtype('{1}') to dtype('{2}') with casting rule '{3}'"),
    ("Cannot cast ufunc {_} input from dtype('{D}') to dtype('{D}') with casting rule '{W}'",
     "cannot cast the input from dtype('{0}') to dtype('{1}') with casting rule '{2}'"),
    ("Cannot cast ufunc {_} output from dtype('{D}') to dtype('{D}') with casting rule '{W}'",
     "cannot cast the output from dtype('{0}') to dtype('{1}') with casting rule '{2}'"),
    ("Cannot cast array data from dtype('{D}') to dtype('{D}') according to the rule '{W}'", None),
    ("Cannot cast scalar from dtype('{D}') to dtype('{D}') according to the rule '{W}'", None),
    ("No loop matching the specified signature and casting was found for ufunc {_}",
     "no implementation matching the specified signature and casting was found"),
    ("loop of ufunc does not support argument {N} of type {T} which has no callable {_} method",
     "argument {0} of type {1} is not supported"),
    ("the resolved dtypes are not compatible with {_}", "the resolved dtypes are not compatible with the operation"),
    ("The DType {_} could not be promoted by {_}", "no common dtype exists for the given inputs"),
    ("{_} not supported for inputs with DType {_}", "not supported for inputs of this dtype"),
    ("cannot conjugate non-numeric dtype", None),
    ("x may not be complex", None),
    # operators
    ("unsupported operand type(s) for {_}: '{T}' and '{T}'", "unsupported operand types: '{0}' and '{1}'"),
    ("'{_}' not supported between instances of '{T}' and '{T}'",
     "comparison not supported between instances of '{0}' and '{1}'"),
    ("bad operand type for {_}: '{T}'", "bad operand type: '{0}'"),
    ("can't multiply sequence by non-int of type '{T}'", None),
    ("The truth value of an array with more than one element is ambiguous.{_}",
     "the truth value of an array with more than one element is ambiguous"),
    ("not all arguments converted during string formatting", None),
    ("Invalid format specifier {_} for object of type '{T}'", "invalid format specifier for object of type '{0}'"),
    ("Unknown format code {_} for object of type '{T}'", "unknown format code for object of type '{0}'"),
    ("len() of unsized object", None),
    ("iteration over a {N}-d array", None),
    ("iteration over a 0-d ZWCArray", None),
    # arguments
    ("{_}() got an unexpected keyword argument '{W}'", "got an unexpected keyword argument '{0}'"),
    ("{_}() got multiple values for argument '{W}'", "got multiple values for argument '{0}'"),
    ("{_}() missing {N} required positional argument{_}", "missing {0} required positional argument(s)"),
    ("{_}() missing required argument {_}", "missing a required argument"),
    ("{_}() takes from {N} to {N} positional arguments but {N} were given",
     "takes from {0} to {1} positional arguments but {2} were given"),
    ("{_}() takes {N} positional argument{_} but {N} {_} given", "takes {0} positional argument(s) but {1} were given"),
    ("{_}() takes exactly {N} argument ({N} given)", "takes exactly {0} argument ({1} given)"),
    ("{_}() got some positional-only arguments passed as keyword arguments: {_}",
     "got positional-only arguments passed as keyword arguments"),
    ("{_}() argument {N} must be {_}ZWCArray, not {T}", "argument {0} must be a ZWCArray, not {1}"),
    ("argument {N} must be zwc.ZWCArray, not <class '{T}'>", "argument {0} must be a ZWCArray, not {1}"),
    ("Input should be a zwc array or scalar. It is a <class '{T}'> instead.",
     "input should be a ZWCArray or a scalar, not {0}"),
    ("{_}first argument must be an array", "the first argument must be an array"),
    ("return arrays must be of ArrayType", None),
    ("output must be an array", None),
    ("'{W}' must be an array", None),
    ("'{W}' must be a tuple of arrays", None),
    ("'{W}' must be a boolean", None),
    ("strings are not allowed for '{W}' keyword. Use True/False/None instead.", None),
    ("order must be one of 'C', 'F', 'A', or 'K' (got {_})", "order must be one of 'C', 'F', 'A', or 'K'"),
    ("casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe' (got {_})",
     "casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe'"),
    ("clipmode must be one of 'clip', 'raise', or 'wrap' (got {_})", "mode must be one of 'clip', 'raise', or 'wrap'"),
    ("mode must be one of 'valid', 'same', or 'full' (got {_})", "mode must be one of 'valid', 'same', or 'full'"),
    ("search side must be 'left' or 'right' (got {_})", "side must be 'left' or 'right'"),
    ("UPLO argument must be 'L' or 'U'", None),
    ("Unrecognized mode {_}", "unrecognized mode"),
    ("{_} is not a valid method. Use one of: {_}", "not a valid method"),
    ("{_} is not a valid estimator for `bins`", "not a valid estimator for bins"),
    ("`bins` must be an integer, a string, or an array", None),
    ("unsupported keyword arguments for mode {_}", "unsupported keyword arguments for this mode"),
    ("Cannot specify order when the array has no fields.", None),
    ("Invalid norm order {_} for vectors", "invalid norm order for vectors"),
    ("Invalid norm order for matrices.", None),
    ("Improper number of dimensions to norm.", None),
    ("order must be non-negative but got {N}", None),
    ("Quantiles must be in the range [0, 1]", None),
    ("Percentiles must be in the range [0, 100]", None),
    ("q must be a scalar or 1d", None),
    ("ndmin must be <= ndmax ({N})", None),
    ("too many values to unpack (expected {N})", None),
    ("not enough values to unpack (expected {N}, got {N})", None),
    ("invalid number of arguments", None),
    ("When used as a decorator, only accepts keyword arguments.", None),
    ("Invalid otype specifi{_}", "invalid otypes"),
    # values
    ("Singular matrix", None),
    ("Matrix is not positive definite", None),
    ("SVD did not converge{_}", "SVD did not converge"),
    ("Eigenvalues did not converge", None),
    ("Array must not contain infs or NaNs", None),
    ("Array must not contain infs or nans", None),
    ("{_} is not defined on empty arrays", "not defined on empty arrays"),
    ("zero-size array to reduction operation {_} which has no identity",
     "zero-size array to a reduction operation which has no identity"),
    ("attempt to get {_} of an empty sequence", "empty sequence"),
    ("division by zero", None),
    ("float division by zero", None),
    ("integer division or modulo by zero", None),
    ("with {N} condition(s), either {N} or {N} functions are expected", None),
    ("list of cases must be same length as list of conditions", None),
    ("invalid entry {N} in condlist: should be boolean ZWCArray", None),
    ("Shape of weights must be consistent with shape of a along specified axis.", None),
    ("Axis must be specified when shapes of a and weights differ.", None),
    ("weights should have the same shape as a.", None),
    ("The weights and list don't have the same length.", None),
    ("Weights sum to zero, can't be normalized", None),
    ("{_}mask and data must be the same size", "mask and data must be the same size"),
    ("invalid entry in choice array", None),
    ("{N}-length sequence.", None),
    ("Need at least {N} and at most {N} array objects.", None),
    ("Cannot insert from an empty array!", None),
    ("fp and xp are not of the same length.", None),
    ("array of sample points is empty", None),
    ("expected x and y to have same length", None),
    ("expected non-empty vector for x", None),
    ("expected 1D vector for x", None),
    ("expected 1D or 2D array for y", None),
    ("a cannot be empty", None),
    ("v cannot be empty", None),
    ("first array argument cannot be empty", None),
    ("second array argument cannot be empty", None),
    ("Expecting at least two arrays.", None),
    ("Input must be a rank-1 array.", None),
    ("Cross index must be {N} dimensional", None),
    ("Shape of array too small to calculate a numerical gradient, at least (edge_order + {N}) elements are "
     "required.", None),
    ("Input arrays must satisfy the requirement {_}", "the input arrays' shapes do not satisfy the requirement"),
    ("only {N}-dimensional arrays can be converted to Python scalars", None),
    ("only length-1 arrays can be converted to Python scalars", None),
    ("list assignment index out of range", None),
    ("At least one array has zero dimension", None),
    ("condition must be a {N}-d array", None),
    ("argument for {_}() given by name ('{W}') and position (position {N})",
     "argument '{0}' given by name and by position (position {1})"),
    ("sort kind must be one of 'quick', 'heap', or 'stable' (got {_})",
     "sort kind must be one of 'quick', 'heap', or 'stable'"),
    ("select kind must be 'introselect' (got {_})", "select kind must be 'introselect'"),
    ("mode {_} is not supported", "mode not supported"),
    ("a must be an array of real numbers", None),
    ("m has more than {N} dimensions", None),
    ("Only method {_} supports weights.{_}", "only the method 'inverted_cdf' supports weights"),
    ("`source` and `destination` arguments must have the same number of elements", None),
    ("index array argument obj to insert must be one dimensional or scalar", None),
    ("all keys need to be the same shape", None),
    ("List at arrays cannot be empty", None),
    ("The first input argument needs to be a sequence", None),
    ("`bins` must be 1d, when an array", None),
    ("{_}boolean array indexing assignment cannot assign {N} input values to the {N} output values where the "
     "mask is true", "boolean array indexing assignment cannot assign {0} input values to the {1} output values "
     "where the mask is true"),
    ("type {T} doesn't define __trunc__ method", "type {0} is not supported"),
    ("'{W}' and '{W}' should be scalars or 1D sequences", None),
    ('arrays to stack must be passed as a "sequence" type such as list or tuple.', None),
    ("Use () not None as shape arguments", None),
    ("{_}() requires stop to be specified.", "requires stop to be specified"),
    ("{_}: scalar arguments expected instead of a tuple.", "scalar arguments expected instead of a tuple"),
    ("shape-mismatch for sum", "shape mismatch"),
    ("only int indices permitted", None),
    ("Calling nonzero on {N}d arrays is not allowed.{_}", "not allowed on {0}-d arrays"),
    ("need sequence of keys with len > {N} in {_}", "need a sequence of keys with len > {0}"),
    ("indices must be integral: the provided empty sequence was inferred as float.{_}",
     "indices must be integral: the provided empty sequence was inferred as float"),
    ("out of memory", None),
]
FALLBACK = {
    "ZWCTypeError": "the arguments are not of types this function accepts",
    "ZWCValueError": "an argument has a value this function does not accept",
    "ZWCIndexError": "an index or axis is out of range",
    "ZWCArithmeticError": "the computation failed",
}
FALLBACK_OTHER = "the arguments are not valid for this function"


def _compile(pattern: str, output: str | None) -> tuple[re.Pattern, str, tuple[str, ...]]:
    parts = re.split(r"\{(\w+)\}", pattern)
    assert output is not None or "_" not in parts[1::2], pattern  # dropped text needs its own wording
    regex, kept, fill = [], [], []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            regex.append(re.escape(part))
            fill.append(part.replace("{", "{{").replace("}", "}}"))
        elif part == "_":
            regex.append(_HOLES["_"])
        else:
            regex.append(f"((?:{_HOLES[part]}))")
            fill.append(f"{{{len(kept)}}}")
            kept.append(part)
    return re.compile("".join(regex), re.DOTALL), output if output is not None else "".join(fill), tuple(kept)


TEMPLATES = [_compile(pattern, output) for pattern, output in _TABLE]


def template_text(text: str) -> str | None:
    """The message of the first template that all of ``text`` matches, or None."""
    text = text.strip()
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT // 2] + text[-MAX_TEXT // 2:]
    for regex, output, kinds in TEMPLATES:
        match = regex.fullmatch(text)
        if match is not None:
            holes = [value if kind != "W" or value in WORDS else "?"
                     for kind, value in zip(kinds, match.groups(), strict=True)]
            return output.format(*holes)
    return None


def clean_message(text: str, kind: str, call: str) -> str:
    """The message the candidate reads for an error ``kind`` (a ZWCError class name) whose
    text was ``text``, raised by ``call`` (``describe_call``)."""
    body = template_text(text)
    return f"{call}: {body if body is not None else FALLBACK.get(kind, FALLBACK_OTHER)}"


# -- the call, from the request ---------------------------------------------------------------
_TAGS = {"$t": "tuple", "$d": "dict", "$c": "complex", "$f": "float", "$s": "slice", "$r": "range",
         "$e": "ellipsis", "$b": "bytes", "$y": "type", "$h": "ZWCArray", "$fn": "function", "$cb": "function"}
_PLAIN = {bool: "bool", int: "int", float: "float", str: "str", list: "list", type(None): "NoneType"}
_KEYWORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")


def _type_of(tag) -> str:
    if type(tag) is dict and len(tag) == 1:
        return _TAGS.get(next(iter(tag)), "object")
    return _PLAIN.get(type(tag), "object")


def describe_call(message, methods: frozenset[str]) -> str:
    """``zwc.kocito(ZWCArray, str, axis=int)``: what was called, as the candidate wrote it, and
    its arguments' types. ``methods``: the array operations a handle forwards."""
    if type(message) is not dict:
        return "zwc"
    op, sub, name = message.get("op"), message.get("sub"), message.get("n")
    if op == "call" and type(name) is str and _KEYWORD.fullmatch(name) and sub in ("", "rfx", None):
        where = f"zwc.{sub + '.' if sub else ''}{name}"
    elif op == "call":
        where = "zwc function"
    elif op == "callh":
        where = "a vectorized function"
    elif op == "m":
        method = message.get("m")
        where = f"ZWCArray.{method}" if type(method) is str and method in methods else "ZWCArray"
    elif op in ("iter", "value"):
        where = f"ZWCArray {op}"
    else:
        where = "zwc.ZWCArray"
    args = message.get("a")
    described = [_type_of(a) for a in args] if type(args) is list else []
    pairs = message.get("k", {}).get("$d") if type(message.get("k")) is dict else None
    for pair in pairs if type(pairs) is list else ():
        key = pair[0] if type(pair) is list and len(pair) == 2 else None
        key = key if type(key) is str and _KEYWORD.fullmatch(key) else "?"
        described.append(f"{key}={_type_of(pair[1]) if key != '?' else '?'}")
    if len(described) > MAX_ARGUMENTS:
        described = [*described[:MAX_ARGUMENTS], "..."]
    return f"{where}({', '.join(described)})"
