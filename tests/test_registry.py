"""The operator registry (aclnn_py/ops/_registry.py) against what every tool offers: each tool
offers exactly the registered operators, each reading agrees with the declaration, and each
seed operator is named in at most five product files (README, "Adding an operator")."""

from __future__ import annotations

import inspect
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError
from aclnn_py import capi, ops
from aclnn_py._compare import OUTPUT_NAMES, compare_results, resolve_op
from aclnn_py._ffi import declarations, elf, op_packages
from aclnn_py.call import _numpy_kernels
from aclnn_py.ops._registry import Operator, by_name, operators, register
from aclnn_py.tools import bench, info, selftest

REPO = Path(__file__).resolve().parents[1]
OPS = operators()
NAMES = [op.name for op in OPS]
IDS = {"ids": NAMES}


def test_the_registry_is_the_package_s_operator_modules():
    # Every module of aclnn_py/ops/ that is not private is an operator module that registers itself.
    modules = sorted(p.stem for p in (REPO / "aclnn_py" / "ops").glob("[!_]*.py"))
    assert sorted(op.function.__module__.rsplit(".", 1)[1] for op in OPS) == modules
    assert ops.OPERATORS == OPS and len(set(NAMES)) == len(NAMES) == len(OPS) > 0
    assert len({op.c_name for op in OPS}) == len(OPS)


def test_an_operator_registers_once():
    with pytest.raises(ValueError, match="registered twice"):
        register(OPS[0])
    assert operators() == OPS


def test_by_name_takes_every_name_of_an_operator():
    for op in OPS:
        assert by_name(op.name) is by_name(op.c_name) is by_name(op.kernel) is op
        assert op.api == op.kernel + "GetWorkspaceSize"
    with pytest.raises(KeyError):
        by_name("aclnnNoSuchOperator")


def test_package_exports():
    exported = {n for n in aclnn_py.__all__ if getattr(getattr(aclnn_py, n), "__module__", "").startswith("aclnn_py.ops.")}
    assert exported == set(NAMES)
    for op in OPS:
        assert getattr(aclnn_py, op.name) is op.function is getattr(ops, op.name)
    namespace: dict[str, object] = {}
    exec("from aclnn_py import *", namespace)
    assert set(NAMES) <= set(namespace)


def test_capi_mirror_and_its_stub():
    assert capi.OPERATORS == tuple(op.kernel for op in OPS)
    stub = (REPO / "aclnn_py" / "capi.pyi").read_text()
    for op in OPS:
        assert callable(getattr(capi, op.api)) and callable(getattr(capi, op.kernel))
        assert f"\ndef {op.api}(" in stub and f"\ndef {op.kernel}(" in stub


def test_info_call_compare_selftest_and_bench_offer_every_operator():
    assert info.OPERATORS == tuple(op.kernel for op in OPS)
    assert set(_numpy_kernels()) == {op.kernel for op in OPS}
    assert OUTPUT_NAMES == {op.name: op.outputs for op in OPS}
    assert [resolve_op(op.name)[0] for op in OPS] == NAMES
    assert {c.op for c in selftest.cases()} == set(NAMES)
    assert list(bench.DEFAULTS) == NAMES
    assert [bench.make_call(op.name).op for op in OPS] == NAMES


@pytest.mark.parametrize("op", OPS, **IDS)
def test_selftest_covers_every_dtype_an_operator_declares(op: Operator):
    declared = {np.dtype(dt) for _shape, dtypes, _params in op.selftest for dt in dtypes}
    tested = {c.dtype for c in selftest.cases() if c.op == op.name}
    assert tested == declared and np.dtype(np.float32) in tested


@pytest.mark.parametrize("op", OPS, **IDS)
def test_the_case_maker_and_the_function_agree(op: Operator):
    # Every parameter of the case maker's call is a parameter of the function, in order.
    call = op.case(np.random.default_rng(0), (1, 2, 5, 6), np.dtype(np.float32),
                   **({"out_channels": 2} if "out_channels" in inspect.signature(op.case).parameters else {}))
    assert call.op == op.name
    result = op.function(*call.args, backend="numpy")
    results = result if isinstance(result, tuple) else (result,)
    assert len(results) == len(op.outputs)


def test_the_package_table_reads_the_declarations():
    # The simulator's build reads the declarations as text (no import): the same values.
    table = runpy.run_path(str(REPO / "aclnn_py" / "_ffi" / "op_packages.py"))["operator_packages"]()
    assert table == op_packages.operator_packages() == {op.c_name: (op.package, op.library, op.header)
                                                         for op in OPS}
    assert {op_packages.operator_of(op.api) for op in OPS} == {op.c_name for op in OPS}
    assert op_packages.operator_of("aclnnNoSuchThing") is None
    roots = [h for h in declarations.ROOT_HEADERS if h.startswith("aclnnop/")]
    assert sorted(roots) == sorted(f"aclnnop/{op.header}" for op in OPS)


def test_a_declaration_must_be_literal(tmp_path):
    good, bad, wrong = (tmp_path / d for d in ("good", "bad", "wrong"))
    for d in (good, bad, wrong):
        d.mkdir()
        (d / "helper.py").write_text("y = 2\n")
    (good / "good.py").write_text('x = 1\n\nOPERATOR = register(Operator(f, "Good", header="aclnn_good.h",\n'
                                  '    package="ops-nn", library="libopapi_nn.so", outputs=("out",)))\n')
    assert op_packages.operator_packages(good) == {"Good": ("ops-nn", "libopapi_nn.so", "aclnn_good.h")}
    (bad / "bad.py").write_text('OPERATOR = register(Operator(f, "Bad", header=HEADER, package="p",\n'
                                '    library="l"))\n')
    with pytest.raises(ValueError, match="string literals"):
        op_packages.operator_packages(bad)
    (wrong / "wrong.py").write_text("OPERATOR = None\n")
    with pytest.raises(ValueError, match="not an Operator"):
        op_packages.operator_packages(wrong)


@pytest.mark.parametrize("op", OPS, **IDS)
def test_sources_and_exports_of_the_simulator(op: Operator, sim_lib):
    stem = op.header.removeprefix("aclnn_").removesuffix(".h")
    assert (REPO / "include" / "aclnnop" / op.header).is_file()
    assert (REPO / "aclnn_py" / "sim" / "src" / "ops" / f"{stem}.c").is_file()
    lib64 = Path(aclnn_py.sim.home()) / "lib64"
    for library in (op.library, op_packages.AGGREGATE_LIBRARY):
        assert {op.api, op.kernel} <= elf.exported_functions(lib64 / library), library


def test_ops_command_lists_every_operator(sim_lib):
    env = {k: v for k, v in os.environ.items() if k not in ("ACLNN_PY_BACKEND", "ACLNN_PY_ASCEND_HOME")}
    proc = subprocess.run([sys.executable, "-m", "aclnn_py", "ops", "--backend", "sim", "--json",
                           *(op.kernel for op in OPS)], capture_output=True, text=True, timeout=120, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = {e["name"]: e for e in json.loads(proc.stdout)}
    assert set(listed) == {op.kernel for op in OPS}
    for op in OPS:
        assert listed[op.kernel]["declared"] and Path(listed[op.kernel]["header"]).name == op.header


def _script(name: str) -> dict:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        return runpy.run_path(str(REPO / "scripts" / f"{name}.py"), run_name=f"_registry_test_{name}")
    finally:
        sys.path.remove(str(REPO / "scripts"))


def test_scripts_bench_times_every_operator():
    cases = _script("bench")["CASES"]
    assert [c.name for c in cases] == [name for op in OPS for name, _make in op.benchmarks]
    assert {c.ours for c in cases} == {op.function for op in OPS}


@pytest.mark.parametrize("op", OPS, **IDS)
def test_the_torch_reference_agrees_on_the_smallest_benchmark(op: Operator, torch):
    # The tiniest real-layer case of scripts/bench.py, through the reference both tools use.
    name, make = min(op.benchmarks, key=lambda b: sum(a.size for a in b[1](np.random.default_rng(0))
                                                       if isinstance(a, np.ndarray)))
    args = make(np.random.default_rng(0))
    ours = op.function(*op.fresh(args), backend="numpy")  # (an in-place operator writes a copy)

    theirs = op.torch(torch, *op.torch_arguments(torch, op.fresh(args)))
    report = compare_results(
        op.name, ours if isinstance(ours, tuple) else np.asarray(ours),
        tuple(None if t is None else t.numpy() for t in theirs) if isinstance(theirs, (tuple, list))
        else theirs.numpy(), ("numpy", "torch"))
    assert report.passed, (name, str(report))


def _outcome(run):
    try:
        result = run()
    except AclnnError as exc:
        return ("error", exc.status, exc.message)
    return ("ok", *(None if r is None else r.tobytes() for r in (result if isinstance(result, tuple) else (result,))))


@pytest.mark.parametrize("op", OPS, **IDS)
def test_fuzz_calls_every_operator_both_ways(op: Operator):
    # fuzz.py's op_call picks among the registered operators, and calls each by its function and
    # by its C name (Operator.c_arguments): on clean arguments the two give the same outcome.
    fuzz = _script("fuzz")
    fuzzer = fuzz["Fuzzer"](np.random.default_rng(5))
    assert fuzzer.aclnn.ops.OPERATORS == OPS
    outcomes = set()
    for _ in range(8):
        args = op.fuzz(fuzzer)
        # (each on copies of what an in-place operator writes: both start from the same input)
        c_args = op.c_arguments(list(op.fresh(args)), lambda shape, dtype: np.zeros(shape, dtype))
        by_function = _outcome(lambda: op.function(*op.fresh(args), backend="numpy"))
        by_c_name = _outcome(lambda: aclnn_py.call(op.kernel, *c_args, backend="numpy"))
        assert by_function == by_c_name
        outcomes.add(by_function[0])
    assert "ok" in outcomes


# -- each seed operator is named in at most five product files --------------------------------

SEEDS = ("im2col_backward", "max_unpool2d_backward", "reflection_pad2d_backward", "avg_pool2d_backward",
         "convolution_backward")
LIMIT = 5
def _product_files() -> dict[str, str]:
    listed = subprocess.run(["git", "ls-files", "aclnn_py", "scripts", "include", "setup.py"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.split()
    texts = {}
    for path in listed:
        if path.endswith(".md"):  # documentation (the issue counts product files outside tests, examples, docs)
            continue
        try:
            texts[path] = _code_only(path, (REPO / path).read_text(encoding="utf-8")).lower()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
    return texts


def _code_only(path: str, text: str) -> str:
    """The code of a file without its comments and docstrings: shared machinery that says in a
    comment which operators use it (the convolution lowering names both convolutions) does not
    make an operator something to register in one more file."""
    if path.endswith((".c", ".h", ".cpp")):
        return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
    if not path.endswith((".py", ".pyi")):
        return text
    import io
    import tokenize

    kept, previous = [], tokenize.NEWLINE
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                continue
            if tok.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                                            tokenize.NL):
                continue  # a docstring (a string standing as a statement)
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                previous = tok.type
            kept.append(tok.string)
    except (tokenize.TokenError, SyntaxError):
        return text
    return " ".join(kept)


def test_product_files_are_found():
    files = _product_files()
    assert "aclnn_py/ops/__init__.py" in files and "include/aclnnop/aclnn_util.h" in files


@pytest.mark.parametrize("name", SEEDS)
def test_a_seed_operator_is_named_in_at_most_five_product_files(name):
    op = by_name(name)
    stem = op.header.removeprefix("aclnn_").removesuffix(".h")   # also the simulator's C file
    # Whole names only (adaptive_avg_pool2d_backward is not avg_pool2d_backward): the snake-case
    # names alone or after "aclnn_", the C name alone, after "aclnn" or "_", or before "GetWorkspaceSize".
    snake = "|".join(re.escape(w) for w in {op.name.lower(), stem.lower()})
    camel = re.escape(op.c_name.lower())
    pattern = re.compile(rf"(?:(?<![a-z0-9_])|(?<=aclnn_))(?:{snake})(?![a-z0-9_])|"
                         rf"(?:(?<![a-z0-9])|(?<=aclnn)){camel}(?:getworkspacesize)?(?![a-z0-9])")
    naming = sorted(p for p, text in _product_files().items() if pattern.search(text))
    # Its module, its simulator C file, its header, its line in ops/__init__.py, and the
    # generated C-API stub.
    assert len(naming) <= LIMIT, naming
    assert {f"aclnn_py/ops/{op.name}.py", f"aclnn_py/sim/src/ops/{stem}.c", f"include/aclnnop/{op.header}",
            "aclnn_py/ops/__init__.py"} <= set(naming)
    assert re.search(rf"^from \.{op.name} import", (REPO / "aclnn_py/ops/__init__.py").read_text(), re.M)


def test_the_operators_page_lists_the_registered_operators():
    # docs/operators.md is generated from the registry (tools.stubs): regenerate it after adding one.
    from aclnn_py.tools import stubs

    page = (REPO / "docs" / "operators.md").read_text()
    assert page == stubs.render_operators(), "regenerate: python -m aclnn_py.tools.stubs operators > docs/operators.md"
    assert re.findall(r"^\| `(aclnn\w+)` \| `(\w+)`", page, re.M) == sorted((op.kernel, op.name) for op in OPS)
    assert "docs/operators.md" in (REPO / "README.md").read_text()


def test_torch_arguments_share_memory_widen_and_keep_the_rest(torch):
    # Operator.torch_arguments: the one conversion of bench, selftest and these tests.
    op = by_name("Cat")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    half = np.ones((2, 2), np.float16)
    flipped = a[:, ::-1]
    converted = op.torch_arguments(torch, (a, [a, half], flipped, [1, 2], 3, None))
    assert converted[0].data_ptr() == a.ctypes.data                     # shares the array's memory
    assert isinstance(converted[1], list) and converted[1][1].dtype == torch.float16
    np.testing.assert_array_equal(converted[2].numpy(), flipped)       # a negative stride: a copy
    assert converted[3:] == ([1, 2], 3, None)                           # numbers and int lists as they are
    widened = op.torch_arguments(torch, ([half],), widen=True)
    assert widened[0][0].dtype == torch.float32


def test_torch_arguments_for_the_golden_raise_floats_as_cann_s_checker_does(torch):
    # golden=True: FLOAT16/BFLOAT16 inputs in FLOAT, FLOAT in DOUBLE; a call mixing them all in FLOAT
    # (MindStudio msprobe's RAISE_PRECISION); integer and bool arrays, numbers and int lists as they are.
    op = by_name("MaxUnpool2dBackward")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    indices = np.arange(6, dtype=np.int64).reshape(2, 3)
    flags = np.array([True, False])
    raised = op.torch_arguments(torch, (a, indices, flags, [1, 2]), golden=True)
    assert raised[0].dtype == torch.float64 and np.array_equal(raised[0].numpy(), a)
    assert raised[1].dtype == torch.int64 and raised[1].data_ptr() == indices.ctypes.data   # shared, untouched
    assert raised[2].dtype == torch.bool and raised[3] == [1, 2]
    for narrow in (np.float16, aclnn_py.bfloat16):
        (alone,) = op.torch_arguments(torch, (np.ones(3, narrow),), golden=True)
        assert alone.dtype == torch.float32
    mixed = op.torch_arguments(torch, (a, [np.ones(3, np.float16)]), golden=True)
    assert mixed[0].dtype == torch.float32 and mixed[1][0].dtype == torch.float32
    assert op.torch_arguments(torch, (a,), golden=False)[0].dtype == torch.float32


def test_the_seed_operators_are_the_five_backwards_the_project_began_with():
    # Operator.seed: scripts/bench.py summarises their cases apart
    assert {op.name for op in OPS if op.seed} == set(SEEDS)


def _results(result):
    return tuple(None if r is None else np.array(r) for r in (result if isinstance(result, tuple) else (result,)))


@pytest.mark.parametrize("op", OPS, **IDS)
def test_a_cached_plan_computes_from_the_arrays_of_its_own_call(op: Operator):
    # The numpy backend caches a plan per argument layout (_numpy/plans.py): a later call of the
    # same layout with other data must give what a fresh plan gives (a plan that kept the arrays
    # it was made from answered every later call with the first call's data).
    shape, dtypes, params = op.selftest[0]
    first, second = (op.case(np.random.default_rng(seed), shape, dtypes[0], **params).args for seed in (1, 2))
    op.function(*op.fresh(first), backend="numpy")
    cached = _results(op.function(*op.fresh(second), backend="numpy"))
    from aclnn_py._numpy.plans import forget_plans

    forget_plans()
    fresh = _results(op.function(*op.fresh(second), backend="numpy"))
    for a, b in zip(cached, fresh, strict=True):
        assert (a is None) == (b is None) and (a is None or np.array_equal(a, b, equal_nan=True)), op.name


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_plans_with_integer_momentum_and_eps_read_each_calls_arrays(training):
    # Integer momentum/eps make the call cacheable; each call must still normalise its own input
    # and update its own running statistics (the plan once read those it was made from).
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
        mean, var = rng.standard_normal(3).astype(np.float32), rng.random(3).astype(np.float32) + 0.5
        running = (mean.copy(), var.copy())
        out = aclnn_py.batch_norm(x, None, None, *running, training, 1, 1, backend="numpy")[2]
        if training:
            m, v = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
            np.testing.assert_allclose(running[0], m, rtol=1e-5, atol=1e-6)      # momentum 1: the batch's
            np.testing.assert_allclose(running[1], v * 32 / 31, rtol=1e-5)
        else:
            m, v = mean, var
        expect = (x - m[:, None, None]) / np.sqrt(v[:, None, None] + 1)
        np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-6)
        grads = aclnn_py.batch_norm_backward(x, x, None, mean, var, mean, var, training, 1, [True, True, True],
                                             backend="numpy")
        again = aclnn_py.batch_norm_backward(x, x, None, mean, var, mean, var, training, 1.0, [True, True, True],
                                             backend="numpy")  # (a float eps: never cached)
        for a, b in zip(grads, again):
            np.testing.assert_array_equal(a, b)
