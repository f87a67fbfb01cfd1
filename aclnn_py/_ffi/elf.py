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


def _exports(data: bytes | mmap.mmap) -> frozenset[str]:
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    is64 = data[4] == 2
    order = "<" if data[5] == 1 else ">"
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
    sections = [struct.unpack_from(section, data, shoff + i * shentsize) for i in range(shnum)]
    names: set[str] = set()
    for sh in sections:
        if sh[1] != _SHT_DYNSYM:
            continue
        strtab = sections[sh[6]]
        str_offset = strtab[4]
        for i in range(sh[5] // entry):
            fields = struct.unpack_from(symbol, data, sh[4] + i * entry)
            if is64:
                name, info, other, shndx = fields[0], fields[1], fields[2], fields[3]
            else:
                name, info, other, shndx = fields[0], fields[3], fields[4], fields[5]
            if (shndx == _SHN_UNDEF or info >> 4 not in _STB_EXPORTED or info & 0xF not in _STT_FUNCTIONS
                    or other & 3 in _STV_HIDDEN_OR_INTERNAL):
                continue
            start = str_offset + name
            names.add(bytes(data[start:data.find(b"\0", start)]).decode("utf-8", "replace"))
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
