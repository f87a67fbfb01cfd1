"""One answer per invalid input, on every backend (CuPy's ``accept_error`` rule).

Each case of ``invalid_cases.CASES`` runs on numpy and on sim: both must raise what the case
says (type; status and C function; the names and words in the message) and the same as each
other, message text included unless the case records why the texts differ.
"""

from __future__ import annotations

import pytest

import aclnn_py
from aclnn_py import AclnnError
from invalid_cases import CASES, Invalid


def raised(case: Invalid, backend: str) -> BaseException:
    """The exception the case's call raises on ``backend`` (a test failure if none)."""
    op = getattr(aclnn_py, case.op)
    try:
        op(*case.args.values(), backend=backend)
    except (AclnnError, TypeError, ValueError, MemoryError, OverflowError) as error:
        return error
    pytest.fail(f"{case.id} on {backend}: no error")


def text(error: BaseException) -> str:
    """What an error says about the input: an AclnnError's library text without the leading
    ``api: `` the C library puts there, else the exception's text."""
    if isinstance(error, AclnnError):
        message = error.message
        return message[len(error.api) + 2:] if message.startswith(f"{error.api}: ") else message
    return str(error)


def check_against_case(case: Invalid, backend: str, error: BaseException) -> None:
    where = f"{case.id} on {backend}: {type(error).__name__}: {error}"
    assert type(error) is case.error, where
    if case.error is AclnnError:
        assert (error.status, error.api) == (case.status, case.api), where
    else:
        assert str(error).startswith(f"{case.api}: "), where
    said = text(error)
    for word in case.named:
        assert word in said, f"{word!r} not named: {where}"
    for word in case.absent:
        assert word not in said, f"{word!r} named: {where}"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_one_answer_on_every_backend(case, backends):
    errors = {backend: raised(case, backend) for backend in backends}
    for backend, error in errors.items():
        check_against_case(case, backend, error)
    if len(errors) == 2 and case.differs is None:
        numpy_text, sim_text = (text(errors[b]) for b in ("numpy", "sim"))
        assert numpy_text == sim_text, f"{case.id}: messages differ\n numpy: {numpy_text}\n   sim: {sim_text}"


def test_ids_are_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
