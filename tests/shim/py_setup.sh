#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Makes the virtual environment the shim's Python test runs in: the system
# Python (its NumPy, from python3-numpy) and mpi4py from PyPI. Its wheel
# carries an extension for Open MPI's ABI and one for MPICH's, which needs
# a link to MPICH's library (py_mpichlib.sh). Also
# mpi4py's test suite and demos, from its source distribution.
#   py_setup.sh DIR
set -euo pipefail
dir=$1
if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -c 'import mpi4py, numpy' 2>/dev/null; then
  rm -rf "$dir"
  /usr/bin/python3 -m venv --system-site-packages "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check mpi4py
fi
# mpi4py's own test suite, from its source distribution: a public program
# the shim's tests run unmodified.
if [ ! -d "$dir/mpi4py-src/test" ]; then
  ver=$("$dir/bin/python" -c 'import mpi4py; print(mpi4py.__version__)')
  rm -rf "$dir/sdist" "$dir/mpi4py-src"
  # The registry's simple index links the source distribution, with its
  # hash; pip download would also build its metadata (minutes).
  mkdir -p "$dir/sdist" "$dir/mpi4py-src"
  "$dir/bin/python" - "$ver" "$dir/sdist" <<'PY'
import hashlib, sys, urllib.request
from html.parser import HTMLParser
ver, out = sys.argv[1], sys.argv[2]
name = f"mpi4py-{ver}.tar.gz"

class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []
    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]

page = Links()
with urllib.request.urlopen("https://pypi.org/simple/mpi4py/", timeout=60) as r:
    page.feed(r.read().decode())
url = next(h for h in page.hrefs if h.split("#")[0].endswith("/" + name))
data = urllib.request.urlopen(url.split("#")[0], timeout=120).read()
want = url.partition("#sha256=")[2]
if want and hashlib.sha256(data).hexdigest() != want:
    sys.exit(f"py_setup: {name}: sha256 mismatch")
open(f"{out}/{name}", "wb").write(data)
PY
  tar xzf "$dir/sdist/mpi4py-$ver.tar.gz" -C "$dir/mpi4py-src" --strip-components=1 \
    "mpi4py-$ver/test" "mpi4py-$ver/demo"
fi
"$(dirname "$0")/py_mpichlib.sh" "$dir"
"$dir/bin/python" -c 'import mpi4py, numpy; print("py_setup: mpi4py", mpi4py.__version__, "numpy", numpy.__version__)'
