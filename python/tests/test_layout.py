# SPDX-License-Identifier: BSD-3-Clause
"""The package's mirrors of the C structures against include/wirespeed.h.

The library writes whole structures into buffers the package allocates (wsp_comm_model,
wsp_shuffle_stats): a field the mirror lacks is written past its end. So every mirrored
structure must list the header's fields, in its order, each of the same size. The header is
read as text here, an independent account of the layout; the test is skipped where the
package runs without the source tree.
"""
import ctypes
import re
from pathlib import Path

import pytest

from wirespeed import _lib

HEADER = Path(__file__).resolve().parents[2] / "include" / "wirespeed.h"

# C structure (typedef struct NAME) -> the package's mirror.
MIRRORS = {
    "wsp_send": _lib.Send,
    "wsp_recv": _lib.Recv,
    "wsp_recvset": _lib.RecvSet,
    "wsp_alg_info": _lib.AlgInfo,
    "wsp_model": _lib.Model,
    "wsp_shuffle_config": _lib.ShuffleConfig,
    "wsp_shuffle_stats": _lib.ShuffleStats,
    "wsp_shuffle_item": _lib.ShuffleItem,
    "wsp_shuffle_batch_handlers": _lib.BatchHandlers,
}

# Sizes of the C types these structures use (Linux, LP64); enums are ints.
C_SIZES = {"double": 8, "int": 4, "unsigned": 4, "size_t": 8, "uint64_t": 8, "pointer": 8}


def header_text():
    if not HEADER.exists():
        pytest.skip(f"{HEADER} not found (the package runs without its source tree)")
    text = HEADER.read_text()
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def enums(text):
    return set(re.findall(r"typedef\s+enum\s+\w*\s*\{[^}]*\}\s*(\w+)\s*;", text))


def c_fields(text, name):
    """[(field, size)] of `typedef struct name { ... }`, in order."""
    m = re.search(r"typedef\s+struct\s+" + name + r"\s*\{(.*?)\}\s*\w+\s*;", text, flags=re.S)
    assert m, f"typedef struct {name} not found in {HEADER}"
    known_enums = enums(text)
    fields = []
    for decl in (d.strip() for d in m.group(1).split(";")):
        if not decl:
            continue
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
        if fp:  # a function pointer
            fields.append((fp.group(1), C_SIZES["pointer"]))
            continue
        first, *rest = [p.strip() for p in decl.split(",")]
        base = re.match(r"((?:const\s+)?[\w ]*?)\s*(\**)\s*(\w+)$", first)
        assert base, f"{name}: cannot read the declaration {decl!r}"
        ctype = base.group(1).replace("const", "").strip()
        for i, item in enumerate([first] + rest):
            stars = base.group(2) if i == 0 else re.match(r"(\**)", item).group(1)
            field = re.search(r"(\w+)$", item).group(1)
            if stars:
                size = C_SIZES["pointer"]
            elif ctype in known_enums:
                size = C_SIZES["int"]
            else:
                assert ctype in C_SIZES, f"{name}.{field}: type {ctype!r} unknown to this test"
                size = C_SIZES[ctype]
            fields.append((field, size))
    return fields


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_mirror_matches_header(name):
    text = header_text()
    want = c_fields(text, name)
    mirror = MIRRORS[name]
    have = [(f[0], ctypes.sizeof(f[1])) for f in mirror._fields_]
    assert [f for f, _ in have] == [f for f, _ in want], \
        f"{mirror.__name__}'s fields differ from struct {name}'s"
    assert have == want, f"{mirror.__name__}'s field sizes differ from struct {name}'s"
