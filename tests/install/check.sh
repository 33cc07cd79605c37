#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
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
  -o "$tmp/hello_pc"
expect=$(printf 'rank 0 got 4 bytes from 2\nrank 1 got 4 bytes from 0\nrank 2 got 4 bytes from 1\n')
for exe in "$tmp/consumer/hello_cmake" "$tmp/hello_pc"; do
  got=$($launch -np 3 "$exe" | sort)
  if [ "$got" != "$expect" ]; then
    echo "FAIL: $exe printed:"; echo "$got"; exit 1
  fi
  echo "ok: $exe"
done

# The names deprecated since 0.1.0 still compile and link against the
# installed header and library, each with a warning that names its
# replacement; the header also compiles as C++.
cat >"$tmp/old_names.c" <<'SRC'
#include <wirespeed.h>
int main(void) {
  wsp_probe_config_t pc;
  wsp_probe_config_init(&pc);
  wsp_striped_request_t *r = 0;
  (void)wsp_send_striped; (void)wsp_recv_striped;
  (void)wsp_isend_striped; (void)wsp_irecv_striped; (void)r;
  if (wsp_version_string()[0] != WSP_VERSION_STRING[0]) return 1;
  return pc.reps > 0 ? 0 : 1;
}
SRC
pcflags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig" pkg-config --cflags --libs wirespeed)
# The run path comes with the flags (cmake/wirespeed.pc.in).
mpicc -std=c11 "$tmp/old_names.c" $pcflags -o "$tmp/old_names" 2>"$tmp/old_names.err"
for new in wsp_netmap_probe_config_t wsp_netmap_probe_config_init wsp_striped_send \
           wsp_striped_recv wsp_striped_isend wsp_striped_irecv wsp_version; do
  if ! grep -q "use $new" "$tmp/old_names.err"; then
    echo "FAIL: no deprecation warning naming $new:"; cat "$tmp/old_names.err"; exit 1
  fi
done
"$tmp/old_names" || { echo "FAIL: wsp_probe_config_init (deprecated) did not fill defaults"; exit 1; }
echo "ok: the deprecated names compile, warn and run"
cmp -s "$src/LICENSE" "$tmp/prefix/share/doc/wirespeed/LICENSE" ||
  { echo "FAIL: the licence is not installed as share/doc/wirespeed/LICENSE"; exit 1; }
echo "ok: the licence is installed"
echo '#include <wirespeed.h>' | mpicxx -x c++ -fsyntax-only -Wall -Werror $pcflags - \
  || { echo "FAIL: wirespeed.h does not compile as C++"; exit 1; }
echo "ok: wirespeed.h compiles as C++"
# The installed wsp-run and wsp-exec find the installed shim library (one
# lookup, wsp-exec's), not the build tree's.
if [ -e "$tmp/prefix/bin/wsp-run" ]; then
  for t in wsp-run wsp-exec; do
    lib=$(env -u WSP_SHIM_LIB "$tmp/prefix/bin/$t" --print-lib) ||
      { echo "FAIL: the installed $t --print-lib failed"; exit 1; }
    case "$lib" in
      "$tmp/prefix/"*/libwirespeed_pmpi.so) [ -f "$lib" ] || { echo "FAIL: $t: $lib is missing"; exit 1; } ;;
      *) echo "FAIL: $t --print-lib printed '$lib', not the installed library"; exit 1 ;;
    esac
  done
  echo "ok: the installed wsp-run and wsp-exec preload $lib"
fi
