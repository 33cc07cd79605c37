#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's pkg-config recipe, run as it stands. Installs the build in $1
# into a temporary prefix; takes the README's program (the C block under "A
# minimal program") as app.c and the shell lines between the README's
# "recipe:pkg-config" markers; puts the temporary prefix in place of the
# README's (/opt/wirespeed) and changes nothing else; runs the lines. The
# program they build must then load the installed library and run on 2
# ranks without LD_LIBRARY_PATH, printing what the README's program prints.
# Any edit of the README that breaks the recipe for a reader breaks this.
#   readme_recipe.sh BUILD_DIR SOURCE_DIR "LAUNCHER"
set -euo pipefail
build=$1 src=$2 launch=$3
readme=$src/README.md
readme_prefix=/opt/wirespeed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
mkdir "$tmp/run"
# The fenced lines of the section or marked span that the first pattern
# opens and the second closes.
fenced() {
  awk -v first="$1" -v last="$2" '
    $0 ~ first { on = 1; next }
    on && $0 ~ last { exit }
    on && /^```/ { code = !code; if (!code) exit; next }
    on && code' "$readme"
}
fenced '^## A minimal program' '^## ' >"$tmp/run/app.c"
grep -q 'int main' "$tmp/run/app.c" || fail "no C program under \"## A minimal program\" in README.md"
recipe=$(fenced '^<!-- recipe:pkg-config' '^<!-- /recipe:pkg-config')
[ -n "$recipe" ] || fail "no shell lines between the recipe:pkg-config markers in README.md"
case $recipe in
  *"PKG_CONFIG_PATH=$readme_prefix/"*) ;;
  *) fail "the recipe no longer sets PKG_CONFIG_PATH under $readme_prefix: $recipe" ;;
esac
recipe=${recipe//"$readme_prefix"/"$tmp/prefix"}
echo "running the README's recipe in $tmp/run:"
sed 's/^/  /' <<<"$recipe"
# A reader's shell: no LD_LIBRARY_PATH, nor any PKG_CONFIG_PATH but the
# recipe's own.
(cd "$tmp/run" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH bash -euo pipefail -c "$recipe") ||
  fail "the README's recipe did not build app"
[ -x "$tmp/run/app" ] || fail "the README's recipe built no ./app"

# The library the program loads must be the one just installed, not one a
# system directory happens to hold.
lib=$(cd "$tmp/run" && env -u LD_LIBRARY_PATH ldd ./app | grep 'libwirespeed\.so' || true)
case $lib in
  *"=> $tmp/prefix/"*) echo "ok: app loads ${lib#*=> }" ;;
  *) fail "app does not load the installed libwirespeed without LD_LIBRARY_PATH: ${lib:-not linked}" ;;
esac
got=$(cd "$tmp/run" && env -u LD_LIBRARY_PATH $launch -np 2 ./app | sort) ||
  fail "app failed on 2 ranks: $got"
expect=$(printf 'rank 0 got 4 bytes from 1\nrank 1 got 4 bytes from 0\n')
[ "$got" = "$expect" ] || fail "app on 2 ranks printed: $got"
echo "ok: the README's pkg-config recipe builds a program that runs on 2 ranks"
