# common.sh: what the scripts in scripts/ share (sourced, not run): the repository root,
# messages, the build parallelism and an incremental `meson setup`.

# The repository root, whatever directory the caller ran the script from.
GS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Parallel jobs for ninja and meson test; GS_JOBS overrides (e.g. on a shared machine).
GS_JOBS=${GS_JOBS:-$(nproc 2>/dev/null || echo 2)}

gs_say() { printf '==> %s\n' "$*"; }
gs_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# gs_build_option DIR NAME: the value of a meson option in a configured build directory (empty
# if it cannot be read).
gs_build_option() {
  python3 - "$1/meson-info/intro-buildoptions.json" "$2" <<'PY' 2>/dev/null
import json, sys
for o in json.load(open(sys.argv[1])):
    if o["name"] == sys.argv[2]:
        print(o["value"])
PY
}

# gs_configure DIR [MESON_OPTION...]: makes DIR a configured build directory, set up with these
# options the first time. A directory that is already configured is kept, so reruns rebuild
# only what changed; it is brought up to date (`ninja build.ninja` reruns meson if a
# meson.build changed) and wiped and set up again if that fails, or if its sanitizers are not
# the ones asked for (-Db_sanitize=..., none when not given): a build-asan/ made without them
# would run the suite unchecked. Delete DIR to change other options.
gs_configure() {
  local dir=$1
  shift
  local want_sanitize=none opt
  for opt in "$@"; do
    case $opt in -Db_sanitize=*) want_sanitize=${opt#-Db_sanitize=} ;; esac
  done
  if [ -f "$dir/build.ninja" ]; then
    local have_sanitize
    have_sanitize=$(gs_build_option "$dir" b_sanitize)
    if [ "$have_sanitize" != "$want_sanitize" ]; then
      gs_say "$dir was set up with b_sanitize=${have_sanitize:-?}, not $want_sanitize; setting it up again"
      rm -rf "$dir"
    elif ninja -C "$dir" build.ninja >"$dir/regenerate.log" 2>&1; then
      return 0
    fi
  fi
  if [ -e "$dir" ]; then
    gs_say "$dir is not a usable meson build directory; setting it up again"
    rm -rf "$dir"
  fi
  meson setup "$dir" "$@" || gs_die "meson setup $dir failed"
}

# gs_build_default: what a script that runs something built does first: installs missing
# packages (setup-deps.sh), then configures and builds build/ incrementally.
gs_build_default() {
  bash "$GS_ROOT/scripts/setup-deps.sh"
  gs_configure build
  ninja -C build -j "$GS_JOBS"
}
