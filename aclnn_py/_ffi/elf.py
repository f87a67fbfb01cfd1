"""The functions a shared library exports, read from its ELF dynamic symbol table without
loading it: ``python -m aclnn_py ops`` inspects a toolkit whose libraries need not load on
this host (no driver, another CPU architecture)."""

from __future__ import annotations

import functools
import mmap
import struct
from pathlib import Path

_SHT_DYNSYM = 11
_SHN_UNDEF = 0
_STB_EXPORTED = (1, 2, 10)   # GLOBAL, WEAK, GNU_UNIQUE
_STT_FUNCTIONS = (2, 10)     # FUNC, GNU_IFUNC
_STV_HIDDEN_OR_INTERNAL = (1, 2)


#: A symbol name longer than this is not read (no C function is named so long): reading each
#: name is bounded, so a table of names overlapping one long string costs linear time.
MAX_NAME = 4096


def _exports(data: bytes | mmap.mmap) -> frozenset[str]:
    """The exported functions of an ELF image; ``ValueError`` saying what is wrong when a field
    points outside it (a truncated file, a section table past its end, ...)."""
    size = len(data)
    if size < 16 or data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    if data[4] not in (1, 2) or data[5] not in (1, 2):
        raise ValueError(f"an ELF file of unknown class or byte order ({data[4]}, {data[5]})")
    is64 = data[4] == 2
    order = "<" if data[5] == 1 else ">"
    if size < (64 if is64 else 52):
        raise ValueError(f"a truncated ELF file: {size} bytes, less than its header")
    if is64:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
        section = order + "IIQQQQIIQQ"  # name type flags addr offset size link info align entsize
        symbol, entry = order + "IBBHQQ", 24   # name info other shndx value size
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x2E)
        section = order + "IIIIIIIIII"
        symbol, entry = order + "IIIBBH", 16   # name value size info other shndx
    if shoff == 0:
        return frozenset()  # no section table (stripped of it): nothing to read the symbols from
    if shentsize < struct.calcsize(section):
        raise ValueError(f"its section headers are {shentsize} bytes, too small to be section headers")

    def within(offset: int, length: int, what: str) -> None:
        if offset + length > size:
            raise ValueError(f"a truncated ELF file: {what} lies past its end ({offset + length} > {size} bytes)")

    within(shoff, shentsize, "the section table")
    if shnum == 0:  # more sections than the header can count: section 0's size holds the number
        shnum = struct.unpack_from(section, data, shoff)[5]
    within(shoff, shnum * shentsize, "the section table")
    sections = [struct.unpack_from(section, data, shoff + i * shentsize) for i in range(shnum)]
    # The ELF specification allows one dynamic symbol table; a second is not read (each one
    # read could be the whole file again).
    sh = next((s for s in sections if s[1] == _SHT_DYNSYM), None)
    names: set[str] = set()
    if sh is None:
        return frozenset()
    within(sh[4], sh[5], "the dynamic symbol table")
    if sh[6] >= shnum:
        raise ValueError(f"the dynamic symbol table names string table {sh[6]} of {shnum} sections")
    str_offset, str_size = sections[sh[6]][4], sections[sh[6]][5]
    within(str_offset, str_size, "the dynamic string table")
    for i in range(sh[5] // entry):
        fields = struct.unpack_from(symbol, data, sh[4] + i * entry)
        if is64:
            name, info, other, shndx = fields[0], fields[1], fields[2], fields[3]
        else:
            name, info, other, shndx = fields[0], fields[3], fields[4], fields[5]
        if (shndx == _SHN_UNDEF or info >> 4 not in _STB_EXPORTED or info & 0xF not in _STT_FUNCTIONS
                or other & 3 in _STV_HIDDEN_OR_INTERNAL):
            continue
        if name >= str_size:
            raise ValueError(f"a symbol's name lies past the dynamic string table ({name} >= {str_size} bytes)")
        start = str_offset + name
        end = data.find(b"\0", start, min(start + MAX_NAME + 1, str_offset + str_size))
        if end >= 0:
            names.add(bytes(data[start:end]).decode("utf-8", "replace"))
    return frozenset(names)


@functools.lru_cache(maxsize=64)
def _cached(path: str, mtime_ns: int, size: int) -> frozenset[str]:
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return _exports(data)


def exported_functions(path: str | Path) -> frozenset[str]:
    """The names of the functions ``path`` exports (defined, default or protected visibility).
    ``ValueError``/``OSError`` when it is not a readable ELF shared library."""
    st = Path(path).stat()
    if st.st_size == 0:
        raise ValueError("an empty file")
    return _cached(str(path), st.st_mtime_ns, st.st_size)
