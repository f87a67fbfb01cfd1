"""An error names what the caller passed: where CANN's checks name an output the operator
function made itself (gradInput of avg_pool2d_backward, made with self's shape and dtype), the
message says what it was made from, with the same text on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError
from aclnn_py.ops._dispatch import _naming_made_outputs


def test_a_made_output_is_explained(backends):
    grad = np.ones((1, 2, 2, 2), np.float16)
    x = np.ones((1, 2, 4, 4), np.float32)
    messages = set()
    for backend in backends:
        with pytest.raises(AclnnError) as info:
            aclnn_py.avg_pool2d_backward(grad, x, [2], [2], [0], False, True, None, backend=backend)
        assert info.value.status == 161002
        messages.add(info.value.message)
    (message,) = messages
    assert message.endswith("gradOutput dtype must equal gradInput dtype, got FLOAT16 and FLOAT "
                            "(gradInput is made with self's shape and dtype)")


def test_only_a_named_output_gets_a_note():
    made = {"out": "self's shape and dtype"}
    error = AclnnError(161002, "aclnnXGetWorkspaceSize", "aclnnXGetWorkspaceSize: index 9 out of range")
    assert _naming_made_outputs(error, made) is error
    named = _naming_made_outputs(AclnnError(161002, "api", "api: out shape must be [2], got [3]"), made)
    assert named.message == "api: out shape must be [2], got [3] (out is made with self's shape and dtype)"
    assert named.status == 161002 and named.api == "api"


def test_no_note_where_the_caller_passed_the_output(backends):
    """Through ``call`` the caller passes gradInput: the message names it as the library does,
    the same on every backend."""
    grad = np.ones((1, 2, 2, 2), np.float16)
    x = np.ones((1, 2, 4, 4), np.float32)
    messages = set()
    for backend in backends:
        with pytest.raises(AclnnError) as info:
            aclnn_py.call("aclnnAvgPool2dBackward", grad, x, [2, 2], [2, 2], [0, 0], False, True, 0, 0,
                          np.zeros_like(x), backend=backend)
        messages.add(info.value.message)
    (message,) = messages
    assert message.endswith("gradOutput dtype must equal gradInput dtype, got FLOAT16 and FLOAT")
