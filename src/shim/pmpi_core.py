#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Makes the shim's own copy of wirespeed: libwirespeed.a with every MPI
function it calls renamed to the MPI's own entry point, so that
wirespeed's MPI calls under the shim reach the MPI, neither a profiler
preloaded beside the shim nor the shim itself (docs/shim.md, "With a
profiler"):
  pmpi_core.py NM OBJCOPY libwirespeed.a out.a colls.list [LIBMPI...]
MPI_X becomes wsp__shim_real_X for a call the shim defines (the rows of
colls.list, their _c twins, MPI_Finalize: gen.py writes them, and they
call the MPI's PMPI_X found past the shim and any tool), PMPI_X for any
other function the MPI libraries LIBMPI... define as PMPI_X (all of
them when none is named). A name with
no PMPI_ twin there stays (none in the MPIs wirespeed builds with; a
message says which)."""
import subprocess
import sys


def symbols(nm, args, check=True):
    out = subprocess.run([nm] + args, check=check, capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 2}


def main():
    if len(sys.argv) < 6:
        sys.exit("usage: pmpi_core.py NM OBJCOPY libwirespeed.a out.a colls.list [LIBMPI...]")
    nm, objcopy, lib, out, colls = sys.argv[1:6]
    libmpi = sys.argv[6:]
    shim = {"Finalize"}
    for line in open(colls):
        line = line.strip()
        if line and not line.startswith("#"):
            name = line.split(" | ")[0].strip()
            shim |= {name, name + "_c"}
    pmpi = set()
    for path in libmpi:
        # (Not every one is an ELF file: libm.so is a linker script.)
        pmpi |= {s for s in symbols(nm, ["-D", "--defined-only", path], check=False)
                 if s.startswith("PMPI_")}
    undefined = sorted(s for s in symbols(nm, ["-u", lib]) if s.startswith("MPI_"))
    renames, kept = [], []
    for s in undefined:
        if s[4:] in shim:
            renames.append(f"{s} wsp__shim_real_{s[4:]}")
        elif "P" + s in pmpi or not libmpi:
            renames.append(f"{s} P{s}")
        else:
            kept.append(s)
    if kept:
        print(f"pmpi_core.py: no PMPI_ twin in the MPI, left as they are: {' '.join(kept)}")
    with open(out + ".syms", "w") as f:
        f.write("\n".join(renames) + "\n")
    subprocess.run([objcopy, f"--redefine-syms={out}.syms", lib, out], check=True)


main()
