"""Every code block of README.md, examples/README.md and docs/*.md runs, so the pages stay true.

* ```python blocks: a page's blocks run in one Python process per backend, with
  ACLNN_PY_BACKEND=sim and then =numpy, each block in a namespace of its own after
  ``set_backend`` of that backend (a block that needs one backend names it in its code).
* ```console and ```bash blocks: a page's blocks run in order in one bash (-euo pipefail) with
  ACLNN_PY_BACKEND=sim, so a later block sees what an earlier one exported.
* A block whose first line is ``# needs an NPU`` is for an Atlas host with CANN: it must parse
  (Python: compile; shell: ``bash -n``), and the Python ones run on ``npu`` over the simulator's
  libraries laid out as an installed CANN, with the tests' stand-in operators beyond the five
  (``aclnnAdd`` ...) installed as a custom operator package.
* README's install and test commands are not run here: they are what .ci/run runs
  (tests/test_readme.py checks that they are .ci/run's).
* Any other fence must say it holds no code to run (```text, ```c, ...; MyST directives such
  as ```{toctree} are Sphinx's); a bare ``` fence fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doc_blocks import NOT_CODE, NPU_LABEL, PAGES, PYTHON, ROOT, SHELL, Block, as_json, blocks
from helpers import build_fake_operator_package

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
RUNNER = Path(__file__).with_name("doc_blocks.py")
#: Where the pages build C programs; each test builds into its own temporary directory.
BUILD_DIR = "/tmp/aclnn-examples"
CI_SCRIPT = (ROOT / ".ci" / "run").read_text()
#: What a block that chooses the npu backend says (in Python or in a shell).
NAMES_NPU = re.compile(r"""backends?\s*=\s*\(?\s*["']npu["']|_backend\(\s*["']npu["']|--backend[= ]npu"""
                       r"|ACLNN_PY_BACKEND=npu")
ALL = {page: blocks(page) for page in PAGES}


def _run_by_ci(block: Block) -> bool:
    return block.page == "README.md" and block.source.strip() in CI_SCRIPT


def _python(page: str, *, npu: bool) -> list[Block]:
    return [b for b in ALL[page] if b.language in PYTHON and b.needs_npu == npu]


def _shell(page: str, *, npu: bool) -> list[Block]:
    return [b for b in ALL[page] if b.language in SHELL and b.needs_npu == npu and not _run_by_ci(b)]


def _env(backend: str) -> dict[str, str]:
    env = dict(os.environ, ACLNN_PY_BACKEND=backend)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run_python(selected: list[Block], backend: str, env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, str(RUNNER), backend], input=as_json(selected), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_page_has_code_and_every_fence_says_what_it_holds():
    assert set(PAGES) >= {"README.md", "docs/guide.md", "docs/simulator.md"}
    for page, found in ALL.items():
        for block in found:
            language = block.language
            assert language in PYTHON + SHELL + NOT_CODE or language.startswith("{"), \
                f"{block.where}: a fence must name its language (```{language}```)"
            if language in PYTHON + SHELL and not block.needs_npu:
                # A block for the NPU is labelled, so that it is not run here and shows as such.
                assert not NAMES_NPU.search(block.source), f"{block.where}: label it {NPU_LABEL!r}"


@pytest.mark.parametrize("backend", ["sim", "numpy"])
@pytest.mark.parametrize("page", [p for p in PAGES if _python(p, npu=False)])
def test_python_blocks_run(sim_lib, page, backend, torch):
    _run_python(_python(page, npu=False), backend, _env(backend))


@pytest.mark.parametrize("page", [p for p in PAGES if _shell(p, npu=False)])
def test_shell_blocks_run(sim_lib, page, tmp_path):
    script = ["set -euo pipefail"]
    for block in _shell(page, npu=False):
        script += [f"echo '--- {block.where}' >&2", block.source.replace(BUILD_DIR, str(tmp_path / "build"))]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=ROOT, env=_env("sim"), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


@pytest.mark.parametrize("page", [p for p in PAGES if _python(p, npu=True) or _shell(p, npu=True)])
def test_npu_blocks_are_labelled_and_parse(sim_lib, page, tmp_path):
    for block in _python(page, npu=True):
        compile(block.source, block.where, "exec")
    for block in _shell(page, npu=True):
        done = subprocess.run(["bash", "-n", "-c", block.source], capture_output=True, text=True)
        assert done.returncode == 0, f"{block.where}: {done.stderr}"
    if not _python(page, npu=True):
        return
    if shutil.which("gcc") is None:
        (pytest.fail if IN_CI else pytest.skip)("gcc is needed to build the stand-in operator package")
    home = Path(sim_lib.toolkit.home)
    env = _env("npu")
    env.update(ACLNN_PY_ASCEND_HOME=str(home),
               ASCEND_CUSTOM_OPP_PATH=str(build_fake_operator_package(home, tmp_path / "package")))
    _run_python(_python(page, npu=True), "npu", env)
