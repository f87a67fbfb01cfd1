"""What a user sees of the package's classes is their public name: a traceback's
``aclnn_py.AclnnError: ...``, ``repr(type(x))``; and they pickle under it."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

import aclnn_py

PUBLIC_CLASSES = ["AclnnError", "BackendUnavailable", "BoolArray", "FloatArray", "Graph", "IntArray", "Prepared",
                  "Scalar", "Tensor"]


@pytest.mark.parametrize("name", PUBLIC_CLASSES)
def test_a_public_class_shows_its_public_name(name):
    cls = getattr(aclnn_py, name)
    assert cls.__module__ == "aclnn_py" and repr(cls) == f"<class 'aclnn_py.{name}'>"


def test_errors_pickle_under_their_public_names():
    error = aclnn_py.AclnnError(161002, "aclnnXGetWorkspaceSize", "aclnnXGetWorkspaceSize: bad")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is aclnn_py.AclnnError and (again.status, again.api, again.message) == (
        error.status, error.api, error.message)
    unavailable = pickle.loads(pickle.dumps(aclnn_py.BackendUnavailable("no CANN")))
    assert type(unavailable) is aclnn_py.BackendUnavailable and str(unavailable) == "no CANN"


def test_a_traceback_names_the_public_class():
    code = "import numpy as np, aclnn_py\naclnn_py.call('aclnnNoSuchOperator', backend='numpy')\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith("aclnn_py.AclnnError: aclnnNoSuchOperator: "), done.stderr
