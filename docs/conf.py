"""Sphinx configuration: the pages are MyST markdown; the API reference is read from the
docstrings of aclnn_py's public names (Google style, "Args:/Returns:/Raises:")."""

from __future__ import annotations

import re
from typing import Any

import aclnn_py

project = "aclnn_py"
author = "aclnn_py contributors"
copyright = "aclnn_py contributors, Apache-2.0"
release = aclnn_py.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# "Returns: gradInput: ..." names the C output: shown inline, not as a return type.
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Keep the alias in signatures instead of the union it stands for.
autodoc_type_aliases = {"DTypeLike": "numpy.typing.DTypeLike", "ArrayLike": "ArrayLike"}
html_theme = "alabaster"

# The operator functions come from the registry, so an operator added there is documented
# without an edit here: api.md holds this marker line where they go.
OPERATORS_MARKER = "<!-- operator functions: filled in by conf.py from the registry -->"


def _operator_directives(app: Any, docname: str, source: list[str]) -> None:
    if OPERATORS_MARKER not in source[0]:
        return
    entries = "\n".join(f"```{{eval-rst}}\n.. autofunction:: aclnn_py.{op.name}\n```\n"
                        for op in aclnn_py.ops.OPERATORS)
    source[0] = source[0].replace(OPERATORS_MARKER, entries)


def _alias_names(app: Any, what: str, name: str, obj: Any, options: Any, signature: str | None,
                 return_annotation: str | None) -> tuple[str | None, str | None]:
    """Sphinx 9 writes an alias inside a union as ``TypeAliasForwardRef('ArrayLike')``: keep the name."""
    def plain(text: str | None) -> str | None:
        return re.sub(r"TypeAliasForwardRef\('([\w.]+)'\)", r"\1", text) if text else text
    return plain(signature), plain(return_annotation)


def setup(app: Any) -> dict[str, bool]:
    app.connect("source-read", _operator_directives)
    app.connect("autodoc-process-signature", _alias_names)
    return {"parallel_read_safe": True}
