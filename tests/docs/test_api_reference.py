"""docs/api.md documents every public name of aclnn_py (the operator functions are added from
the registry by docs/conf.py, at the marker line)."""

from __future__ import annotations

import re

import aclnn_py
from doc_blocks import ROOT

API = (ROOT / "docs" / "api.md").read_text()
CONF = (ROOT / "docs" / "conf.py").read_text()


def test_every_public_name_is_in_the_api_reference():
    documented = set(re.findall(r"aclnn_py\.(\w+)", API))
    operators = {op.name for op in aclnn_py.ops.OPERATORS}
    assert set(aclnn_py.__all__) - operators <= documented, set(aclnn_py.__all__) - operators - documented
    assert operators <= set(aclnn_py.__all__)


def test_the_operator_functions_come_from_the_registry():
    marker = re.search(r'^OPERATORS_MARKER = "(.*)"$', CONF, re.M)
    assert marker is not None and API.count(marker[1]) == 1
    assert "aclnn_py.ops.OPERATORS" in CONF
