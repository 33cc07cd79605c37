#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Python package as a user would, into a fresh virtual
# environment, and checks that it imports on the right MPI.
#
#   install.sh REPO VENV openmpi|mpich cmake|pkg-config [BUILD_DIR]
#
# The package is built from a copy of the repository's files (those git
# tracks, plus new ones it does not ignore), so that nothing of a build
# tree or an earlier install takes part, and nothing is written into REPO.
# cmake: pip builds libwirespeed from that copy with CMake, for the MPI of
# MPICC. pkg-config: BUILD_DIR (this flavour's CMake build) is installed
# into VENV/prefix first, and pip finds it there through PKG_CONFIG_PATH.
# The environment gets mpi4py (a dependency of the package) and pytest from
# PyPI; NumPy comes from the system (python3-numpy). The copy is removed on
# exit, also after a failure; VENV stays for the tests that use it.
set -euo pipefail
repo=$1 venv=$2 flavor=$3 how=$4 build=${5:-}
case $flavor in
  openmpi) mpicc=mpicc mpiexec=mpiexec.openmpi ;;
  mpich) mpicc=mpicc.mpich mpiexec=mpiexec.mpich ;;
  *) echo "install.sh: flavour '$flavor' is not openmpi or mpich" >&2; exit 2 ;;
esac
case $how in
  cmake | pkg-config) ;;
  *) echo "install.sh: how '$how' is not cmake or pkg-config" >&2; exit 2 ;;
esac
[ "$how" != pkg-config ] || [ -f "$build/CMakeCache.txt" ] ||
  { echo "install.sh: pkg-config needs the CMake build directory, got '$build'" >&2; exit 2; }

tmp=$(mktemp -d /tmp/wsp-pyinstall.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - -cf - 2>/dev/null) | tar -xf - -C "$tmp/src"
[ -f "$tmp/src/python/pyproject.toml" ] ||
  { echo "install.sh: $repo is not a git checkout of wirespeed" >&2; exit 1; }

rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$(dirname "$0")/../shim/py_mpichlib.sh" "$venv"
export MPICC=$mpicc MPIEXEC=$mpiexec WIRESPEED_BUILD=$how
unset WIRESPEED_LIBRARY
if [ "$how" = pkg-config ]; then
  cmake --install "$build" --prefix "$venv/prefix" >/dev/null
  PKG_CONFIG_PATH=$(dirname "$(find "$venv/prefix" -name wirespeed.pc | head -1)")
  export PKG_CONFIG_PATH
fi
"$venv/bin/pip" install --disable-pip-version-check -q "$tmp/src/python[test]"

# What was installed: a library for this MPI, from where it was asked for.
"$(dirname "$0")/../shim/py_run.sh" "$venv" - "$flavor" - "$flavor" "$how" "$venv" <<'PY'
import sys
import wirespeed, wirespeed._build as b
flavor, how, venv = sys.argv[1:]
print(f"install.sh: wirespeed {wirespeed.__version__}: {wirespeed.FLAVOR} library from "
      f"{b.SOURCE}: {wirespeed.LIBRARY_PATH}")
assert wirespeed.FLAVOR == flavor, (wirespeed.FLAVOR, flavor)
assert b.SOURCE == how, (b.SOURCE, how)
assert wirespeed.LIBRARY_PATH.startswith(venv), "the library is outside the environment"
PY
# The commands run from the installed package, and state the version of
# the library the package loads (one number, written in wirespeed.h).
libv=$("$(dirname "$0")/../shim/py_run.sh" "$venv" - "$flavor" - <<'PY'
import wirespeed
print(wirespeed.__version__)
PY
)
for cmd in wirespeed-lab wirespeed-report; do
  "$venv/bin/$cmd" --help >/dev/null || { echo "install.sh: $cmd --help failed" >&2; exit 1; }
  v=$("$venv/bin/$cmd" --version) && [ "$v" = "$cmd (wirespeed) $libv" ] ||
    { echo "install.sh: $cmd --version printed '$v', expected '$cmd (wirespeed) $libv'" >&2; exit 1; }
done
echo "install.sh: ok"
