#!/usr/bin/env bash
# check-install.sh BUILD_DIR CC: the install test. Installs BUILD_DIR into a temporary
# destdir, then builds and runs a small program against the installed headers, library and
# gradscope.pc with nothing but `pkg-config --cflags --libs gradscope`, as a user would, and
# checks that the manual pages and the tours' programs are where their readers look.
set -euo pipefail
build=$1
cc=${2:-cc}

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet
pc=$(find "$dest" -name gradscope.pc -print -quit)
[ -n "$pc" ] || { echo "gradscope.pc was not installed" >&2; exit 1; }
prefix=$(sed -n 's/^prefix=//p' "$pc")

# The .pc names the real prefix; point it at the destdir copy instead.
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") \
        pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs gradscope)
echo "pkg-config --cflags --libs gradscope: $flags"

cat >"$dest/user.c" <<'C'
#include <gradscope/gradscope.h>
#include <stdio.h>

int main(void) {
  int64_t shape[] = {3};
  gs_tensor a = gs_arange(0, 3, 1, GS_F32), b = gs_ones(GS_F32, shape, 1);
  gs_tensor c = gs_add(a, b);
  double v = gs_get(c, (int64_t[]){2});
  gs_dispose(a), gs_dispose(b), gs_dispose(c);
  printf("gradscope %s: 2 + 1 = %g, live tensors %llu\n", GS_VERSION_STRING, v,
         (unsigned long long)gs_live_tensor_count());
  return v == 3.0 && gs_live_tensor_count() == 0 ? 0 : 1;
}
C
# shellcheck disable=SC2086 # flags are words
"$cc" -std=c11 -Wall -Werror -o "$dest/user" "$dest/user.c" $flags
libdir=$(PKG_CONFIG_PATH=$(dirname "$pc") \
         pkg-config --define-variable=prefix="$dest$prefix" --variable=libdir gradscope)
LD_LIBRARY_PATH=$libdir "$dest/user"

# The manual pages go to MANDIR/man1, where man finds them.
for page in gradscope.1 gradscope-inspector.1; do
  installed=$(find "$dest" -path "*/share/man/man1/$page" -print -quit)
  [ -n "$installed" ] || { echo "the manual page $page was not installed in share/man/man1" >&2; exit 1; }
done
echo "installed manual pages: $(dirname "$installed")"

# The guided tours' programs go to LIBEXECDIR/gradscope/tours/, where an installed
# `gradscope explain --tour` looks for them (GS_TOUR_DIR points this destdir copy there).
tour=$(find "$dest" -path '*/gradscope/tours/tour-micrograd' -print -quit)
[ -n "$tour" ] || { echo "the tour programs were not installed" >&2; exit 1; }
bindir=$(dirname "$(find "$dest" -path '*/bin/gradscope' -print -quit)")
LD_LIBRARY_PATH=$libdir GS_TOUR_DIR=$(dirname "$tour") "$bindir/gradscope" explain \
  --tour micrograd > "$dest/tour.txt"
grep -q '^micrograd: ' "$dest/tour.txt" || { echo "the installed tour did not run" >&2; exit 1; }
echo "installed tours: $(ls "$(dirname "$tour")" | wc -l) programs, micrograd plays"

# Tour 8's program is a Python script installed beside them; an installed gradscope runs it with
# the Python the module was built for, which finds the installed module in its own path (here
# the destdir copy, given as PYTHONPATH). A build without the module or PyTorch installs no
# script, and says so here.
script=$(find "$dest" -path '*/gradscope/tours/tour-sharing.py' -print -quit)
package=$(find "$dest" -path '*-packages/gradscope/__init__.py' -print -quit)
module=${package:+$(dirname "$(dirname "$package")")} # the directory holding the package
if [ -z "$script" ]; then
  echo "tour 8 (sharing) was not installed: the build left it out (see meson's message)"
elif [ -z "$module" ]; then
  echo "tour-sharing.py was installed without the Python module" >&2; exit 1
else
  [ -x "$script" ] || { echo "tour-sharing.py is not executable" >&2; exit 1; }
  LD_LIBRARY_PATH=$libdir GS_TOUR_DIR=$(dirname "$tour") PYTHONPATH=$module \
    OMP_NUM_THREADS=1 "$bindir/gradscope" explain --tour sharing > "$dest/sharing.txt"
  grep -q '^sharing: ' "$dest/sharing.txt" || { echo "the installed sharing tour did not run" >&2; exit 1; }
  grep -q '^7/7 ' "$dest/sharing.txt" || { echo "the installed sharing tour lacks steps" >&2; exit 1; }
  echo "installed tour 8: $script plays with the module in $module"
fi
