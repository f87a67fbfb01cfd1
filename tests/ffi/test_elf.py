"""Reading a library's exports from its ELF file: a damaged file (truncated, or whose fields
point outside it) is a ``ValueError`` saying what is wrong, never another exception, a hang or
names read from outside the symbol table."""

from __future__ import annotations

import os
import random
import shutil
import struct
import subprocess
import sys

import pytest

from aclnn_py._ffi.elf import exported_functions

SOURCE = """\
__attribute__((visibility("default"))) int aclnnElfOneGetWorkspaceSize(void) { return 0; }
__attribute__((visibility("default"))) int aclnnElfOne(void) { return 1; }
"""
EXPORTED = {"aclnnElfOneGetWorkspaceSize", "aclnnElfOne"}


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    if shutil.which("gcc") is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("gcc is needed to build the library, and CI must have it")
        pytest.skip("gcc is needed to build the library")
    folder = tmp_path_factory.mktemp("elf")
    (folder / "one.c").write_text(SOURCE)
    subprocess.run(["gcc", "-shared", "-fPIC", "-fvisibility=hidden", str(folder / "one.c"), "-o",
                    str(folder / "libone.so")], check=True)
    return (folder / "libone.so").read_bytes()


class Elf64:
    """The fields of a little-endian 64-bit ELF image these tests change."""

    def __init__(self, data: bytes) -> None:
        assert data[4] == 2 and data[5] == 1, "the tests expect the host's x86-64/aarch64 layout"
        self.data = bytearray(data)
        self.shoff, = struct.unpack_from("<Q", data, 0x28)
        self.shentsize, self.shnum, self.shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def section(self, index: int) -> int:
        return self.shoff + index * self.shentsize

    def index_of(self, sh_type: int) -> int:
        return next(i for i in range(self.shnum)
                    if struct.unpack_from("<I", self.data, self.section(i) + 4)[0] == sh_type)

    def put(self, fmt: str, offset: int, value: int) -> Elf64:
        struct.pack_into(fmt, self.data, offset, value)
        return self


def read(tmp_path, data: bytes | bytearray, name: str = "lib.so"):
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return exported_functions(path)


def test_the_intact_library(tmp_path, library):
    assert EXPORTED <= read(tmp_path, library)


def test_every_truncation_is_a_value_error(tmp_path, library):
    lengths = sorted({*range(1, 80), *range(80, len(library), 41), len(library) - 1})
    for n in lengths:
        try:
            read(tmp_path, library[:n], f"cut{n}.so")
        except ValueError:
            continue
        # a cut that leaves the section table whole (none does here: it ends the file) may be read
        assert n >= Elf64(library).section(Elf64(library).shnum), n


DYNSYM = 11


@pytest.mark.parametrize("damage, message", [
    (lambda e: e.put("<Q", 0x28, len(e.data) + 100), "section table lies past"),
    (lambda e: e.put("<H", 0x3C, 0xFFFF), "section table lies past"),
    (lambda e: e.put("<H", 0x3A, 8), "too small"),
    (lambda e: e.put("<Q", e.section(e.index_of(DYNSYM)) + 0x20, 1 << 40), "dynamic symbol table lies past"),
    (lambda e: e.put("<Q", e.section(e.index_of(DYNSYM)) + 0x18, len(e.data) - 8), "dynamic symbol table lies past"),
    (lambda e: e.put("<I", e.section(e.index_of(DYNSYM)) + 0x28, 0xFFFF), "string table"),
    (lambda e: e.put("<Q", e.section(struct.unpack_from("<I", e.data, e.section(e.index_of(DYNSYM)) + 0x28)[0])
                     + 0x18, len(e.data) + 1), "dynamic string table lies past"),
    (lambda e: e.put("<B", 4, 7), "unknown class"),
])
def test_fields_pointing_outside_the_file(tmp_path, library, damage, message):
    with pytest.raises(ValueError, match=message):
        read(tmp_path, damage(Elf64(library)).data)


def test_names_outside_the_string_table_are_not_read(tmp_path, library):
    """A symbol whose name offset lies past the string table (the bytes after it are not names)."""
    elf = Elf64(library)
    dynsym = elf.section(elf.index_of(DYNSYM))
    offset, = struct.unpack_from("<Q", elf.data, dynsym + 0x18)
    count = struct.unpack_from("<Q", elf.data, dynsym + 0x20)[0] // 24
    for i in range(count):
        elf.put("<I", offset + i * 24, 0x7FFFFF00)
    with pytest.raises(ValueError, match="name lies past"):
        read(tmp_path, elf.data)


def test_a_header_alone(tmp_path):
    for data in (b"\x7fELF", b"\x7fELF\x02\x01\x01" + bytes(9), b"\x7fELF\x02\x01\x01" + bytes(40)):
        with pytest.raises(ValueError):
            read(tmp_path, data)


FUZZ = """
import random, struct, sys
from pathlib import Path
from aclnn_py._ffi.elf import _exports
data = Path(sys.argv[1]).read_bytes()
shoff, = struct.unpack_from("<Q", data, 0x28)
rng = random.Random(26)
places = [*range(16, 64), *range(shoff, len(data))]
for trial in range(3000):
    image = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        image[rng.choice(places)] = rng.randrange(256)
    try:
        _exports(bytes(image))
    except ValueError:
        pass
print("ok")
"""


def test_random_damage_to_the_headers_and_section_table(tmp_path, library):
    """Any damage to the header or the section table: a result or a ValueError (in a child, so
    a hang fails the test instead of stopping the run)."""
    (tmp_path / "lib.so").write_bytes(library)
    done = subprocess.run([sys.executable, "-c", FUZZ, str(tmp_path / "lib.so")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
