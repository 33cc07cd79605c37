#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi4py's wheel carries an extension for MPICH's ABI that loads MPICH's
# library as libmpi.so.12, which Debian does not ship: this puts a link to
# libmpich.so.12 under that name in VENV/mpichlib (py_run.sh adds it to
# LD_LIBRARY_PATH for MPICH jobs). Nothing when MPICH is not installed.
#   py_mpichlib.sh VENV
set -euo pipefail
mkdir -p "$1/mpichlib"
# awk reads to the end: leaving early would kill ldconfig with SIGPIPE, and
# under pipefail and set -e that ended this script now and then.
mpich=$(/sbin/ldconfig -p | awk '/libmpich\.so\.12 / && !found {print $NF; found = 1}')
[ -z "$mpich" ] || ln -sf "$mpich" "$1/mpichlib/libmpi.so.12"
