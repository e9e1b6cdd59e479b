"""The catalogue: which NumPy functions ZWC exposes, and the signature family of each.

SE-Bench v1 exposes 278 functions: 247 from ``numpy`` and 31 from ``numpy.linalg``
(served under ``zwc.rfx``). Six names exist in both (``cross``, ``diagonal``,
``matmul``, ``outer``, ``tensordot``, ``trace``), which is why entries are keyed by
full path. Each entry carries a *kind* — its signature family — that task generation
uses to pick valid inputs, and a ``sample``: the source of one valid argument list
(``arr(...)`` marks an argument that must be an array object rather than a list, for
in-place functions). The catalogue is data, not code: tests run every sample through
both NumPy and the generated package.
"""

from __future__ import annotations

from dataclasses import dataclass

LINALG_PREFIX = "numpy.linalg."


@dataclass(frozen=True)
class Entry:
    """One catalogued function.

    Attributes:
        numpy: full NumPy path, e.g. ``numpy.linalg.inv``.
        kind: signature family (a key of ``KINDS``).
        sample: source of a valid argument tuple; empty means the kind's default.
        target: the path actually called, when NumPy renamed the function
            (``numpy.trapz`` became ``numpy.trapezoid`` in NumPy 2.4).
    """

    numpy: str
    kind: str
    sample: str = ""
    target: str = ""

    @property
    def short(self) -> str:
        """The bare function name (``inv`` for ``numpy.linalg.inv``)."""
        return self.numpy.rsplit(".", 1)[1]

    @property
    def is_linalg(self) -> bool:
        return self.numpy.startswith(LINALG_PREFIX)

    @property
    def call_target(self) -> str:
        return self.target or self.numpy

    @property
    def call_sample(self) -> str:
        return self.sample or KINDS[self.kind]


_M = "[[4.0, 1.0], [2.0, 3.0]]"
_SPD = "[[4.0, 1.0], [1.0, 3.0]]"
_FLOATS_2D = "[[1.5, -2.0, 3.25], [0.5, 4.0, -1.75]]"

# kind -> default sample (source of an argument tuple). Kinds are signature families.
KINDS: dict[str, str] = {
    "unary": f"({_FLOATS_2D},)",
    "unary_unit": "([0.5, -0.25, 0.9, 0.0],)",
    "unary_positive": "([0.5, 1.25, 2.0, 10.0],)",
    "unary_ge1": "([1.0, 1.5, 2.0, 10.0],)",
    "unary_tuple": "([0.5, -1.25, 8.0, 3.75],)",
    "unary_complex": "([1+2j, -0.5+0j, 3-1j],)",
    "predicate": "([1.0, float('nan'), float('-inf'), 0.0, -2.5, float('inf')],)",
    "binary": "([1.5, -2.0, 3.0, 7.25], [0.5, 4.0, -1.5, 2.0])",
    "binary_tuple": "([7.5, -2.0, 9.0], [2.0, 3.0, -4.0])",
    "compare": "([1.5, -2.0, 3.0, 2.0], [0.5, 4.0, 3.0, 2.0])",
    "logical": "([True, False, True, False], [False, False, True, True])",
    "integer_unary": "([1, 5, 255, 1024],)",
    "integer_binary": "([12, 255, 7, 64], [10, 15, 3, 2])",
    "float_int": "([1.5, 2.0, -0.5], [2, 3, 1])",
    "int_to_string": "(10,)",
    "reduction": f"({_FLOATS_2D},)",
    "reduction_bool": "([[True, False], [True, True]],)",
    "cumulative": f"({_FLOATS_2D},)",
    "quantile": "([1.0, 5.0, 2.0, 4.0, 9.0], 50)",
    "sort": "([3.0, 1.0, 2.0, -5.0, 4.5],)",
    "search": "([1.0, 2.0, 3.0, 5.0], [2.5, 0.0, 6.0])",
    "index": "([[0, 3, 0], [5, 0, 1]],)",
    "select": "([True, False, True], [1, 2, 3], [10, 20, 30])",
    "set": "([3, 1, 2, 3, 1], [2, 3, 5])",
    "shape": f"({_FLOATS_2D},)",
    "join": "([[1.0, 2.0], [3.0, 4.0]],)",
    "construct": "(3,)",
    "construct_like": f"({_FLOATS_2D},)",
    "product": "([1.0, 2.0, 3.0], [4.0, -1.0, 0.5])",
    "matrix": f"({_M},)",
    "matrix_pair": f"({_M}, [1.0, 2.0])",
    "polynomial": "([1.0, -3.0, 2.0], [0.0, 1.5, 3.0])",
    "statistics": "([[1.0, 2.0, 4.0], [2.0, 1.0, 0.5]],)",
    "inplace": "(arr([1.0, 2.0, 3.0, 4.0]), [0, 2], [9.0, 8.0])",
    "string_output": "(arr([[1.5, 2.0], [3.0, 4.25]]),)",
    "functional": "(abs,)",
    "conversion": f"({_FLOATS_2D},)",
    "info": f"({_FLOATS_2D},)",
}

# numpy path | kind | sample override | target override
_TABLE = """
abs|unary
absolute|unary
acos|unary_unit
acosh|unary_ge1
add|binary
all|reduction_bool|([True, False, True],)
allclose|compare|([1.0, 2.0], [1.0, 2.0000001])
amax|reduction
amin|reduction
any|reduction_bool|([True, False, True],)
arange|construct|(1.0, 4.0, 0.5)
arccos|unary_unit
arccosh|unary_ge1
arcsin|unary_unit
arcsinh|unary
arctan|unary
arctan2|binary
arctanh|unary_unit
argmax|reduction
argmin|reduction
argpartition|sort|([3.0, 1.0, 2.0, -5.0, 4.5], 2)
argsort|sort
argwhere|index
around|unary|([1.256, -2.5, 3.14159], 2)
array|conversion|([1.7, -2.2, 3.9, 0.5], 'int64')
array2string|string_output
array_equal|compare|([1, 2, 3], [1, 2, 3])
array_equiv|compare|([1, 2], [[1, 2], [1, 2]])
array_repr|string_output
array_str|string_output
asanyarray|conversion|([1.7, -2.2, 3.9, 0.5], 'int64')
asarray|conversion|([1.7, -2.2, 3.9, 0.5], 'int64')
ascontiguousarray|conversion|([1.7, -2.2, 3.9, 0.5], 'int64')
asfortranarray|conversion|([[1.7, -2.2], [3.9, 0.5]], 'int64')
asin|unary_unit
asinh|unary
astype|conversion|(arr([1.7, -2.2, 3.9]), 'int64')
atan|unary
atan2|binary
atanh|unary_unit
atleast_1d|shape|(5.0,)
atleast_2d|shape|([1.0, 2.0],)
atleast_3d|shape|([1.0, 2.0],)
average|reduction|([1.0, 2.0, 4.0], 0, [3.0, 1.0, 1.0])
base_repr|int_to_string|(255, 16)
binary_repr|int_to_string|(10,)
bincount|statistics|([0, 1, 1, 3, 2, 1],)
bitwise_and|integer_binary
bitwise_count|integer_unary
bitwise_invert|integer_unary
bitwise_left_shift|integer_binary|([1, 3, 5], [2, 1, 4])
bitwise_not|integer_unary
bitwise_or|integer_binary
bitwise_right_shift|integer_binary|([64, 255, 7], [2, 4, 1])
bitwise_xor|integer_binary
block|join|([arr([1.0, 2.0]), arr([3.0]), arr([4.0, 5.0, 6.0])],)
broadcast_arrays|shape|([1.0, 2.0, 3.0], [[1.0], [2.0]])
broadcast_to|shape|([1.0, 2.0, 3.0], (2, 3))
cbrt|unary
ceil|unary
choose|select|([0, 1, 2, 1], [[1, 2, 3, 4], [10, 20, 30, 40], [5, 6, 7, 8]])
clip|unary|([1.5, -2.0, 3.25, 0.5], -1.0, 2.0)
compress|select|([True, False, True], [1.0, 2.0, 3.0])
concatenate|join
conj|unary_complex
conjugate|unary_complex
convolve|product
copy|conversion
copysign|binary
copyto|inplace|(arr([1.0, 2.0, 3.0]), [7.0, 8.0, 9.0])
corrcoef|statistics
correlate|product
cos|unary
cosh|unary
count_nonzero|index
cov|statistics
cross|product
cumprod|cumulative
cumsum|cumulative
deg2rad|unary
degrees|unary
delete|shape|([1.0, 2.0, 3.0, 4.0], 1)
diag|shape|([1.0, 2.0, 3.0],)
diagflat|shape|([1.0, 2.0],)
diagonal|shape|([[1.0, 2.0], [3.0, 4.0]],)
diff|cumulative
digitize|search|([0.2, 6.4, 3.0, 1.6], [0.0, 1.0, 2.5, 4.0, 10.0])
divide|binary
divmod|binary_tuple
dot|product
empty|construct|((2, 3),)
empty_like|construct_like
equal|compare
exp|unary
exp2|unary
expand_dims|shape|([1.0, 2.0], 0)
expm1|unary
extract|select|([True, False, True], [1.0, 2.0, 3.0])
eye|construct
fabs|unary
flip|shape
floor|unary
floor_divide|binary
fmax|binary
fmin|binary
fmod|binary
frexp|unary_tuple
full|construct|((2, 2), 7.5)
full_like|construct_like|([[1.0, 2.0], [3.0, 4.0]], 0.5)
gcd|integer_binary
geomspace|construct|(1.0, 1000.0, 4)
gradient|cumulative|([1.0, 4.0, 9.0, 16.0],)
greater|compare
greater_equal|compare
heaviside|binary|([-1.5, 0.0, 2.0], [0.5, 0.5, 0.5])
histogram|statistics|([1.0, 2.0, 2.0, 3.0, 5.0], 3)
hstack|join
hypot|binary
identity|construct
imag|unary_complex
inner|product
insert|shape|([1.0, 2.0, 3.0], 1, 9.0)
interp|search|([2.5, 1.0, 1.5], [1.0, 2.0, 3.0], [3.0, 2.0, 0.0])
intersect1d|set
invert|integer_unary
isclose|compare
isfinite|predicate
isinf|predicate
isnan|predicate
isreal|unary_complex
ix_|shape|([0, 1], [2, 4])
kron|product|([1.0, 2.0], [[1.0, 0.0], [0.0, 1.0]])
lcm|integer_binary
ldexp|float_int
left_shift|integer_binary|([1, 3, 5], [2, 1, 4])
less|compare
less_equal|compare
lexsort|sort|([[1, 2, 1], [3, 1, 2]],)
linspace|construct|(0.0, 1.0, 5)
log|unary_positive
log10|unary_positive
log1p|unary_positive
log2|unary_positive
logaddexp|binary
logaddexp2|binary
logical_and|logical
logical_not|predicate
logical_or|logical
logical_xor|logical
logspace|construct|(0.0, 2.0, 3)
matmul|product|([[1.0, 2.0], [3.0, 4.0]], [[0.5, 0.0], [1.0, -1.0]])
max|reduction
maximum|binary
mean|reduction
median|reduction
meshgrid|shape|([1.0, 2.0, 3.0], [4.0, 5.0])
min|reduction
minimum|binary
mod|binary
modf|unary_tuple
moveaxis|shape|([[[1.0, 2.0]], [[3.0, 4.0]]], 0, -1)
multiply|binary
nan_to_num|predicate
negative|unary
nextafter|binary
nonzero|index
not_equal|compare
ones|construct|((2, 3),)
ones_like|construct_like
outer|product
pad|shape|([1.0, 2.0, 3.0], 2)
partition|sort|([3.0, 1.0, 2.0, -5.0, 4.5], 2)
percentile|quantile
permute_dims|shape
piecewise|functional|([-1.0, 0.0, 2.0], [[True, False, False], [False, False, True]], [-1.0, 1.0])
place|inplace|(arr([1.0, 2.0, 3.0, 4.0]), [True, False, True, False], [9.0, 8.0])
polyfit|polynomial|([0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 5.0, 7.0], 1)
polyval|polynomial
positive|unary
pow|binary|([1.5, 2.0, 3.0], [2.0, 0.5, 3.0])
power|binary|([1.5, 2.0, 3.0], [2.0, 0.5, 3.0])
prod|reduction
ptp|reduction
put|inplace
putmask|inplace|(arr([1.0, 2.0, 3.0, 4.0]), [True, False, True, False], [9.0, 8.0])
quantile|quantile|([1.0, 5.0, 2.0, 4.0, 9.0], 0.25)
rad2deg|unary
radians|unary
ravel|shape
real|unary_complex
reciprocal|unary_positive
remainder|binary
repeat|shape|([1.0, 2.0, 3.0], 2)
reshape|shape|([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (3, 2))
resize|shape|([1.0, 2.0, 3.0], (2, 4))
right_shift|integer_binary|([64, 255, 7], [2, 4, 1])
rint|unary
roll|shape|([1.0, 2.0, 3.0, 4.0], 1)
rollaxis|shape|(arr([[[1.0, 2.0]], [[3.0, 4.0]]]), 2)
roots|polynomial|([1.0, -3.0, 2.0],)
rot90|shape
round|unary|([1.256, -2.5, 3.14159], 1)
searchsorted|search
select|select|([[True, False, False], [False, True, False]], [[1, 2, 3], [10, 20, 30]], 0)
shape|info
sign|unary
signbit|predicate
sin|unary
sinc|unary
sinh|unary
size|info
sort|sort
sort_complex|unary_complex
spacing|unary|([1.5e9, -2.0e10, 3.25e8],)
split|shape|(arr([1.0, 2.0, 3.0, 4.0]), 2)
sqrt|unary_positive
square|unary
squeeze|shape|([[[1.0], [2.0]]],)
stack|join|([[1.0, 2.0], [3.0, 4.0]], 1)
std|reduction
subtract|binary
sum|reduction
swapaxes|shape|([[1.0, 2.0, 3.0]], 0, 1)
take|shape|([4.0, 3.0, 5.0, 7.0], [0, 3])
tan|unary
tanh|unary
tensordot|product|([[1.0, 2.0], [3.0, 4.0]], [[0.5, 1.0], [2.0, -1.0]], 1)
tile|shape|([1.0, 2.0], 3)
trace|matrix
transpose|shape
trapz|cumulative|([1.0, 2.0, 3.0, 5.0],)|numpy.trapezoid
tri|construct
tril|matrix
triu|matrix
true_divide|binary
trunc|unary
union1d|set
unique|set|([3, 1, 2, 3, 1],)
unravel_index|index|([1, 4, 5], (2, 3))
unwrap|cumulative|([0.0, 3.0, 6.5, 1.0],)
var|reduction
vdot|product
vectorize|functional
vstack|join|([[[1.0, 2.0]], [[3.0, 4.0], [5.0, 6.0]]],)
where|select
zeros|construct|((2, 3),)
zeros_like|construct_like
linalg.cholesky|matrix|({spd},)
linalg.cond|matrix
linalg.cross|product
linalg.det|matrix
linalg.diagonal|matrix
linalg.eig|matrix|({spd},)
linalg.eigh|matrix|({spd},)
linalg.eigvals|matrix|({spd},)
linalg.eigvalsh|matrix|({spd},)
linalg.inv|matrix
linalg.lstsq|matrix_pair|([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]], [1.0, 2.0, 2.5])
linalg.matmul|matrix_pair|({m}, [[1.0, 0.0], [0.5, 2.0]])
linalg.matrix_norm|matrix
linalg.matrix_power|matrix|({m}, 3)
linalg.matrix_rank|matrix
linalg.matrix_transpose|matrix
linalg.multi_dot|matrix|([{m}, [[1.0, 0.0], [0.5, 2.0]], [[2.0, 1.0], [0.0, 1.0]]],)
linalg.norm|matrix
linalg.outer|product
linalg.pinv|matrix
linalg.qr|matrix
linalg.slogdet|matrix
linalg.solve|matrix_pair
linalg.svd|matrix
linalg.svdvals|matrix
linalg.tensordot|matrix_pair|({m}, [[1.0, 0.0], [0.5, 2.0]])
linalg.tensorinv|matrix|([[[[1.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]]], [[[0.0, 0.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 2.0]]]],)
linalg.tensorsolve|matrix_pair
linalg.trace|matrix
linalg.vecdot|product
linalg.vector_norm|product|([3.0, -4.0, 12.0],)
"""


def _parse(table: str) -> tuple[Entry, ...]:
    entries = []
    for line in table.strip().splitlines():
        name, kind, *rest = line.split("|")
        sample = rest[0].format(m=_M, spd=_SPD) if rest else ""
        target = rest[1] if len(rest) > 1 else ""
        entries.append(Entry(numpy=f"numpy.{name}", kind=kind, sample=sample, target=target))
    return tuple(entries)


CATALOGUE: tuple[Entry, ...] = _parse(_TABLE)
BY_PATH: dict[str, Entry] = {e.numpy: e for e in CATALOGUE}


def entry(numpy_path: str) -> Entry:
    """The entry for a NumPy path; raises KeyError with a suggestion when unknown."""
    try:
        return BY_PATH[numpy_path]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(numpy_path, BY_PATH, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"{numpy_path!r} is not catalogued.{hint}") from None
