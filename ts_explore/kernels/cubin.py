"""Read a kernel's resource usage (registers, static shared memory) from its cubin.

The DSL compiles for a named architecture without a GPU, and ``--keep-cubin``
keeps the ELF it built. Registers per thread live in the ``.nv.info``
section as an ``EIATTR_REGCOUNT`` record per kernel symbol, next to an
``EIATTR_FRAME_SIZE`` record (the per-thread stack frame in local memory:
register spills and local arrays; 0 for a kernel that spills nothing); static
shared memory is the size of the ``.nv.shared.<kernel>`` section. A launch plan
uses them for occupancy, on a machine with or without a GPU.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

EIATTR_REGCOUNT = 0x2F
EIATTR_FRAME_SIZE = 0x11
EIFMT_SVAL = 0x04  # a record with a 16-bit size and a payload
_FIXED_PAYLOAD = {0x01: 0, 0x02: 1, 0x03: 2}  # EIFMT_NVAL / BVAL / HVAL: payload bytes after the attribute byte


@dataclass(frozen=True)
class KernelResources:
    """What one kernel of a cubin uses per launch."""

    name: str
    registers: int
    static_smem_bytes: int
    frame_bytes: int = 0  # local memory per thread (spills, local arrays)


def _sections(data: bytes) -> list[tuple[str, int, int, int]]:
    """``(name, offset, size, link)`` of every section of a little-endian ELF64 file, in index order."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not an ELF64 cubin")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQI", data, shoff + i * shentsize) for i in range(shnum)]
    names_off = headers[shstrndx][4]
    return [(_string(data, names_off + name), offset, size, link)
            for name, _kind, _flags, _addr, offset, size, link in headers]


def _string(data: bytes, at: int) -> str:
    return data[at:data.index(b"\0", at)].decode()


def _symbols(data: bytes, sections: list[tuple[str, int, int, int]]) -> list[str]:
    """Symbol names by index (``.symtab``, its strings in the section it links to)."""
    _, offset, size, link = next(s for s in sections if s[0] == ".symtab")
    strings = sections[link][1]
    return [_string(data, strings + struct.unpack_from("<I", data, offset + 24 * i)[0]) for i in range(size // 24)]


def _records(blob: bytes) -> list[tuple[int, bytes]]:
    """``(attribute, payload)`` of every EIATTR record in an ``.nv.info`` section."""
    out, pos = [], 0
    while pos + 2 <= len(blob):
        fmt, attr = blob[pos], blob[pos + 1]
        if fmt == EIFMT_SVAL:
            size, = struct.unpack_from("<H", blob, pos + 2)
            out.append((attr, blob[pos + 4:pos + 4 + size]))
            pos += 4 + size
        elif fmt in _FIXED_PAYLOAD:
            size = _FIXED_PAYLOAD[fmt]
            out.append((attr, blob[pos + 2:pos + 2 + size]))
            pos += 2 + size
        else:
            break
    return out


def kernel_resources(cubin: bytes) -> tuple[KernelResources, ...]:
    """Registers, static shared memory and stack frame of every kernel in ``cubin``."""
    sections = _sections(cubin)
    symbols = _symbols(cubin, sections)
    registers: dict[str, int] = {}
    frames: dict[str, int] = {}
    for name, offset, size, _link in sections:
        if name != ".nv.info" and not name.startswith(".nv.info."):
            continue
        for attr, payload in _records(cubin[offset:offset + size]):
            if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and len(payload) >= 8:
                index, count = struct.unpack_from("<II", payload)
                if index < len(symbols):
                    (registers if attr == EIATTR_REGCOUNT else frames)[symbols[index]] = count
    shared = {name: size for name, _offset, size, _link in sections}
    return tuple(KernelResources(name, count, shared.get(f".nv.shared.{name}", 0), frames.get(name, 0))
                 for name, count in registers.items())


__all__ = ["KernelResources", "kernel_resources"]
