#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the shim's wrappers from colls.list (the one list of the calls it
intercepts), and under MPI 4 their large-count twins (MPI_Bcast_c, ...):
gen.py [--fortran] colls.list out.c

For each call X the shim defines both MPI_X and PMPI_X, so that it works
beside a profiler that wraps MPI_X and calls PMPI_X (docs/shim.md, "With a
profiler"); shim.c's wsp__shim_sym resolves, once, the next MPI_X and the
MPI's own PMPI_X past the shim.
  - wsp__shim_run_X is the shim's logic: it returns the MPI's PMPI_X at once
    when the shim passes the call by (wsp__shim_pass: off, a collective not
    chosen, re-entry from inside wirespeed, an intercommunicator);
    otherwise it asks wsp__shim_begin whether wirespeed runs it, runs the
    wirespeed call, and gives the MPI's own call the arguments back where
    wsp__shim_end says so (an argument wirespeed refuses: the MPI then
    reports it as it would without the shim).
  - MPI_X hands the program's call to a tool that sits after the shim (it
    will call PMPI_X, which reaches the shim's PMPI_X), else runs the logic.
  - PMPI_X runs the logic when its caller is a tool wrapping MPI_X (shim.c's
    wsp__shim_caller), and the MPI's PMPI_X for any other caller (the
    program's own PMPI_ calls, the MPI's internals, wirespeed).
  - wsp__shim_real_X is the MPI's PMPI_X: the shim's own calls and
    wirespeed's (the shim's copy of wirespeed calls it for MPI_X; CMake's
    src/shim/pmpi_core.py) go there directly.
With --fortran it also writes the Fortran entry points (mpi_bcast_, ...),
for an MPI whose Fortran bindings call its internals rather than the C
MPI_ functions (Open MPI; MPICH's call the C functions, which the C
wrappers already catch)."""
import sys


def parse(path):
    rows = []
    for n, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        f = [x.strip() for x in line.split(" | ")]
        if len(f) != 5:
            sys.exit(f"{path}:{n}: want 5 fields separated by ' | ', got {len(f)}")
        name, params, coll, nbytes, call = f
        args = []
        for p in params.split(","):
            p = p.strip()
            args.append(p.replace("*", " ").split()[-1].replace("[]", ""))
        if args[-1] != "comm":
            sys.exit(f"{path}:{n}: the last parameter must be MPI_Comm comm")
        rows.append(dict(name=name, params=params, coll=coll, bytes=nbytes,
                         call=call, args=", ".join(args)))
    return rows


def large_count(r):
    """The row's MPI-4 large-count twin, MPI_<Name>_c: the same call with its
    counts as MPI_Count (the root stays an int), its count arrays as
    MPI_Count and its displacement arrays as MPI_Aint."""
    params = []
    for p in r["params"].split(","):
        p = p.strip()
        name = p.split()[-1]
        if p.startswith("int ") and name.endswith("count"):
            p = f"MPI_Count {name}"
        elif p.startswith("const int ") and name.endswith("counts[]"):
            p = f"const MPI_Count {name}"
        elif p.startswith("const int ") and name.endswith("displs[]"):
            p = f"const MPI_Aint {name}"
        params.append(p)
    return dict(r, name=r["name"] + "_c", params=", ".join(params), wide=1)


def c_wrapper(r):
    r = dict(r, call=r["call"].replace("WSP__SHIM_WIDE", str(r.get("wide", 0))),
             bytes=r["bytes"].replace("WSP__SHIM_WIDE", str(r.get("wide", 0))))
    n, a = r["name"], r["args"]
    fn = f"wsp__shim_fn_{n}"
    return f"""
/* MPI_{n} */
typedef int (*{fn})({r['params']});
static wsp__shim_sym_t wsp__shim_sym_{n} = WSP__SHIM_SYM("{n}");

int wsp__shim_real_{n}({r['params']});
int wsp__shim_real_{n}({r['params']}) {{
  return (({fn})wsp__shim_sym(&wsp__shim_sym_{n})->real)({a});
}}

static int wsp__shim_run_{n}({r['params']}) {{
  if (wsp__shim_pass(WSP_COLL_{r['coll']}, comm)) return wsp__shim_real_{n}({a});
  wsp__shim_call_t c;
  if (!wsp__shim_begin(&c, WSP_COLL_{r['coll']}, comm, {r['bytes']}))
    return wsp__shim_real_{n}({a});
  wsp_comm_t *w = c.w;
  int rc = wsp__shim_end(&c, {r['call']});
  if (rc != WSP__SHIM_FALLBACK) return rc;
  return wsp__shim_fallback(&c, wsp__shim_real_{n}({a}));
}}

WSP__SHIM_API int MPI_{n}({r['params']}) {{
  const wsp__shim_sym_t *s = wsp__shim_sym(&wsp__shim_sym_{n});
  if (s->tool_after && !wsp__shim_inside) return (({fn})s->next)({a});
  return wsp__shim_run_{n}({a});
}}

WSP__SHIM_API int PMPI_{n}({r['params']}) {{
  const wsp__shim_sym_t *s = wsp__shim_sym(&wsp__shim_sym_{n});
  switch (wsp__shim_caller(s, __builtin_return_address(0))) {{
  case WSP__SHIM_TO_SHIM: return wsp__shim_run_{n}({a});
  case WSP__SHIM_TO_NEXT: return (({fn})s->next)({a});
  default: return (({fn})s->real)({a});
  }}
}}
"""


# How a Fortran binding (mpif.h, use mpi, use mpi_f08) passes each C
# parameter, and how the wrapper turns it back into C.
FORTRAN = {
    "void": ("void *{n}", "wsp__shim_fbuf({n})"),
    "int": ("MPI_Fint *{n}", "(int)*{n}"),
    # MPI_Fint is int wherever wirespeed builds (the generated file asserts it).
    "int[]": ("MPI_Fint *{n}", "(const int *){n}"),
    "MPI_Datatype": ("MPI_Fint *{n}", "PMPI_Type_f2c(*{n})"),
    "MPI_Op": ("MPI_Fint *{n}", "PMPI_Op_f2c(*{n})"),
    "MPI_Comm": ("MPI_Fint *{n}", "PMPI_Comm_f2c(*{n})"),
}


def f_wrapper(r):
    """The Fortran entry points of one call, for an MPI whose Fortran
    bindings do not go through the C MPI_ functions (Open MPI): every
    name its compilers may use, and the mpi_f08 one, whose ierror may be
    absent (NULL)."""
    fparams, cargs = [], []
    for p in r["params"].split(","):
        p = p.strip()
        name = p.replace("*", " ").split()[-1]
        base = "void" if "void" in p else p.replace("const", "").split()[0]
        if name.endswith("[]"):  # an array of counts or displacements
            name, base = name[:-2], base + "[]"
        decl, conv = FORTRAN[base]
        fparams.append(decl.format(n=name))
        cargs.append(conv.format(n=name))
    fparams.append("MPI_Fint *ierr")
    lower = r["name"].lower()
    impl = f"wsp__shim_f_{lower}"
    out = [f"""
/* mpi_{lower} from Fortran: the C wrapper above, with the handles and the
 * sentinels (MPI_IN_PLACE, MPI_BOTTOM) made C's. */
static void {impl}({", ".join(fparams)}) {{
  int rc = MPI_{r['name']}({", ".join(cargs)});
  if (ierr) *ierr = (MPI_Fint)rc;
}}"""]
    for alias in (f"mpi_{lower}", f"mpi_{lower}_", f"mpi_{lower}__", f"MPI_{lower.upper()}",
                  f"mpi_{lower}_f08_"):
        out.append(f"WSP__SHIM_API void {alias}({', '.join(fparams)});")
        out.append(f"void {alias}({', '.join(fparams)}) __attribute__((alias(\"{impl}\")));")
    return "\n".join(out) + "\n"


def main():
    args = [a for a in sys.argv[1:] if a != "--fortran"]
    if len(args) != 2:
        sys.exit("usage: gen.py [--fortran] colls.list out.c")
    rows = parse(args[0])
    out = ["/* Generated by src/shim/gen.py from src/shim/colls.list: do not edit. */",
           '#include "shim.h"']
    out += [c_wrapper(r) for r in rows]
    # MPI-4 programs (and mpi4py over an MPI-4 library) call the
    # large-count functions.
    out.append("\n#if MPI_VERSION >= 4")
    out += [c_wrapper(large_count(r)) for r in rows]
    out.append("#endif")
    if "--fortran" in sys.argv:
        out.append("\n_Static_assert(sizeof(MPI_Fint) == sizeof(int), "
                   "\"Fortran's count arrays are passed to C as ints\");")
        out += [f_wrapper(r) for r in rows]
    open(args[1], "w").write("\n".join(out))


main()
