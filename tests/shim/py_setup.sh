#!/usr/bin/env bash
# Makes the virtual environment the shim's Python test runs in: the system
# Python (its NumPy, from python3-numpy) and mpi4py from PyPI. Its wheel
# carries an extension for Open MPI's ABI and one for MPICH's; the MPICH
# one needs MPICH's library under the name libmpi.so.12, which Debian does
# not ship, so a link to libmpich.so.12 goes beside it (mpichlib/).
#   py_setup.sh DIR
set -euo pipefail
dir=$1
if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -c 'import mpi4py, numpy' 2>/dev/null; then
  rm -rf "$dir"
  /usr/bin/python3 -m venv --system-site-packages "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check mpi4py
fi
mkdir -p "$dir/mpichlib"
mpich=$(/sbin/ldconfig -p | awk '/libmpich\.so\.12 /{print $NF; exit}')
[ -z "$mpich" ] || ln -sf "$mpich" "$dir/mpichlib/libmpi.so.12"
"$dir/bin/python" -c 'import mpi4py, numpy; print("py_setup: mpi4py", mpi4py.__version__, "numpy", numpy.__version__)'
