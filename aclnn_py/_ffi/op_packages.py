"""Which CANN operator package defines each operator aclnn_py ships: the one table.

Since CANN 8.5 each operator repository builds its own library (ops-nn → ``libopapi_nn.so``,
ops-math → ``libopapi_math.so``, ops-cv → ``libopapi_cv.so``), and the classic
``libopapi.so`` aggregates them.  The simulator's build compiles each operator into the
library named here (and into the aggregate), its tests derive each library's exports from
it, and the binding names the library in its error when an operator is missing.

No package-relative imports: ``aclnn_py/sim/_build.py`` reads this file by path inside
pip's isolated build environment.  The simulator's source of an operator declared
in ``include/aclnnop/aclnn_<stem>.h`` is ``aclnn_py/sim/src/ops/<stem>.c``.
"""

from __future__ import annotations

#: The classic library that aggregates every package's operators.
AGGREGATE_LIBRARY = "libopapi.so"

#: operator (the aclnn<Name> of its two functions) -> (package, library, header in include/aclnnop/)
OPERATOR_PACKAGES = {
    "AvgPool2dBackward": ("ops-nn", "libopapi_nn.so", "aclnn_avgpool2d_backward.h"),
    "MaxUnpool2dBackward": ("ops-nn", "libopapi_nn.so", "aclnn_max_unpool2d_backward.h"),
    "ConvolutionBackward": ("ops-nn", "libopapi_nn.so", "aclnn_convolution_backward.h"),
    "ReflectionPad2dBackward": ("ops-math", "libopapi_math.so", "aclnn_pad2d_backward.h"),
    "Im2colBackward": ("ops-cv", "libopapi_cv.so", "aclnn_im2col_backward.h"),
}


def operator_of(function: str) -> str | None:
    """The operator an aclnn function belongs to (``aclnnIm2colBackwardGetWorkspaceSize`` ->
    ``Im2colBackward``), or None for a function of no operator in the table."""
    for name in OPERATOR_PACKAGES:
        if function in (f"aclnn{name}", f"aclnn{name}GetWorkspaceSize"):
            return name
    return None
