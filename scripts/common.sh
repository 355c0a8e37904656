# common.sh: what the scripts in scripts/ share (sourced, not run): the repository root,
# messages, the build parallelism and an incremental `meson setup`.

# The repository root, whatever directory the caller ran the script from.
GS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Parallel jobs for ninja and meson test; GS_JOBS overrides (e.g. on a shared machine).
GS_JOBS=${GS_JOBS:-$(nproc 2>/dev/null || echo 2)}

gs_say() { printf '==> %s\n' "$*"; }
gs_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# gs_configure DIR [MESON_OPTION...]: makes DIR a configured build directory, set up with these
# options the first time. A directory that is already configured is kept, so reruns rebuild
# only what changed; it is brought up to date (`ninja build.ninja` reruns meson if a
# meson.build changed) and wiped and set up again if that fails. Delete DIR to change options.
gs_configure() {
  local dir=$1
  shift
  if [ -f "$dir/build.ninja" ] && ninja -C "$dir" build.ninja >"$dir/regenerate.log" 2>&1; then
    return 0
  fi
  if [ -e "$dir" ]; then
    gs_say "$dir is not a usable meson build directory; setting it up again"
    rm -rf "$dir"
  fi
  meson setup "$dir" "$@" || gs_die "meson setup $dir failed"
}
