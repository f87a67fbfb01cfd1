"""aclnn_py/ops/_common.py: what the operator files share."""

from __future__ import annotations

import os
import signal

import pytest

from aclnn_py.ops import _common
from aclnn_py.ops._common import in_parallel


def test_in_parallel_covers_every_index_once_and_reraises():
    seen = []
    in_parallel(10, lambda a, b: seen.extend(range(a, b)), min_per_thread=1)
    assert sorted(seen) == list(range(10))
    seen.clear()
    in_parallel(10, lambda a, b: seen.extend(range(a, b)), min_per_thread=100)  # one part
    assert seen == list(range(10))

    def fail(a, b):
        raise ValueError(f"part {a}:{b}")

    with pytest.raises(ValueError, match="part"):
        in_parallel(10, fail, min_per_thread=1)


def test_a_forked_child_gets_a_pool_of_its_own():
    in_parallel(4, lambda a, b: None)  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: the inherited pool has no threads; a new one must serve
        signal.alarm(30)  # a hang (a pool without threads) ends the child instead of the test run
        try:
            seen = []
            in_parallel(4, lambda a, b: seen.extend(range(a, b)))
            os._exit(0 if sorted(seen) == [0, 1, 2, 3] and _common._pool_pid == os.getpid() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
