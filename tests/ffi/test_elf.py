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


GLOBAL_FUNC, GLOBAL_DATA, HIDDEN = 0x12, 0x11, 2


def build(is64: bool, order: str, symbols, *, shnum_in_section_0: bool = False, dynsym: bool = True) -> bytes:
    """A minimal ELF image: header, .dynstr, .dynsym, section table [null, .dynstr, .dynsym].
    ``symbols``: (name, info, other, shndx)."""
    strtab = b"\0" + b"".join(name.encode() + b"\0" for name, *_ in symbols)
    offsets, at = [], 1
    for name, *_ in symbols:
        offsets.append(at)
        at += len(name.encode()) + 1
    if is64:
        sym = b"".join(struct.pack(order + "IBBHQQ", o, info, other, shndx, 0, 0)
                       for o, (_, info, other, shndx) in zip(offsets, symbols))
        header_size, section, entry = 64, order + "IIQQQQIIQQ", 24
    else:
        sym = b"".join(struct.pack(order + "IIIBBH", o, 0, 0, info, other, shndx)
                       for o, (_, info, other, shndx) in zip(offsets, symbols))
        header_size, section, entry = 52, order + "IIIIIIIIII", 16
    strtab_at = header_size
    symtab_at = strtab_at + len(strtab)
    shoff = symtab_at + len(sym)
    sections = [
        struct.pack(section, 0, 0, 0, 0, 0, 3 if shnum_in_section_0 else 0, 0, 0, 0, 0),
        struct.pack(section, 0, 3, 0, 0, strtab_at, len(strtab), 0, 0, 1, 0),
        struct.pack(section, 0, DYNSYM if dynsym else 2, 0, 0, symtab_at, len(sym), 1, 0, 8, entry),
    ]
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1 if order == "<" else 2, 1]) + bytes(9)
    shnum = 0 if shnum_in_section_0 else 3
    size = struct.calcsize(section)
    if is64:
        rest = struct.pack(order + "HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, size, shnum, 0)
    else:
        rest = struct.pack(order + "HHIIIIIHHHHHH", 3, 3, 1, 0, 0, shoff, 0, 52, 0, 0, size, shnum, 0)
    image = ident + rest
    assert len(image) == header_size
    return image + strtab + sym + b"".join(sections)


SYMBOLS = [("aclnnShown", GLOBAL_FUNC, 0, 5), ("aclnnHidden", GLOBAL_FUNC, HIDDEN, 5),
           ("aclnnUndefined", GLOBAL_FUNC, 0, 0), ("aclnnData", GLOBAL_DATA, 0, 5),
           ("aclnn" + "L" * 5000, GLOBAL_FUNC, 0, 5)]


@pytest.mark.parametrize("is64", [False, True])
@pytest.mark.parametrize("order", ["<", ">"])
def test_both_classes_and_byte_orders(tmp_path, is64, order):
    # the 5,000-character name is longer than any name read
    assert read(tmp_path, build(is64, order, SYMBOLS)) == {"aclnnShown"}


def test_more_sections_than_the_header_counts(tmp_path):
    assert read(tmp_path, build(True, "<", SYMBOLS, shnum_in_section_0=True)) == {"aclnnShown"}


def test_no_section_table_or_no_dynamic_symbols(tmp_path):
    assert read(tmp_path, build(True, "<", SYMBOLS, dynsym=False)) == frozenset()
    image = bytearray(build(True, "<", SYMBOLS))
    image[0x28:0x30] = bytes(8)  # e_shoff 0: the section table was stripped
    assert read(tmp_path, image) == frozenset()
