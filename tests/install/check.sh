#!/usr/bin/env bash
# Installs the build in $1 into a temporary prefix, builds the README's
# example against it with CMake (find_package) and with pkg-config, and runs
# both on 3 ranks, comparing their output with what the example must print.
set -euo pipefail
build=$1 src=$2 launch=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/install" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DEXAMPLE="$src/examples/sparse_hello.c" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig" \
  mpicc "$src/examples/sparse_hello.c" $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig" pkg-config --cflags --libs wirespeed) \
  -Wl,-rpath,"$tmp/prefix/lib" -Wl,-rpath,"$tmp/prefix/lib/x86_64-linux-gnu" -o "$tmp/hello_pc"
expect=$(printf 'rank 0 got 4 bytes from 2\nrank 1 got 4 bytes from 0\nrank 2 got 4 bytes from 1\n')
for exe in "$tmp/consumer/hello_cmake" "$tmp/hello_pc"; do
  got=$($launch -np 3 "$exe" | sort)
  if [ "$got" != "$expect" ]; then
    echo "FAIL: $exe printed:"; echo "$got"; exit 1
  fi
  echo "ok: $exe"
done
