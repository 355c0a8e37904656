#!/bin/sh
# check-mpi-netns.sh: the multi-host path on one machine: runs a program as 2 MPI ranks in two
# network namespaces joined by a veth pair, so the ranks can reach each other only over TCP
# (Open MPI's btl tcp), as on two hosts. mpirun starts in namespace A; Open MPI launches the
# daemon of "host" nodeB through a launch agent written here (plm_rsh_agent, what ssh is
# between real hosts) that enters namespace B with `ip netns exec`; each side also gets its own
# hostname (`unshare --uts`), so Open MPI sees two nodes. The job must exit 0 within
# MAX_SECONDS, print TEXT, and the veth must have carried at least MIN_KIB KiB.
#
# Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN), `ip` (iproute2), `unshare` (util-linux) and
# mpirun. A missing tool is reported as tests/missing-tool.sh does (a failure in CI); a
# machine where namespaces cannot be made (not root, or a container without the capabilities)
# skips with a line saying so, in CI too: that is the machine's policy, not a package.
# Usage: check-mpi-netns.sh MAX_SECONDS TEXT MIN_KIB -- PROGRAM [ARG...]
set -u
max=$1 text=$2 min_kib=$3
shift 3
[ "${1:-}" = "--" ] && shift
here=$(dirname "$0")
for tool in ip unshare mpirun; do
  command -v $tool >/dev/null 2>&1 || exec "$here/missing-tool.sh" "$tool" "the two-namespace MPI test"
done
tag=gs$$
ns_a=${tag}a ns_b=${tag}b net=10.77.$(($$ % 250)).0/24
prefix=${net%.0/24}
dir=$(mktemp -d "${TMPDIR:-/tmp}/check-mpi-netns.XXXXXX")
cleanup() {
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null # the veth pair goes with its namespaces
  rm -rf "$dir"
}
trap cleanup EXIT
if ! ip netns add "$ns_a" 2>"$dir/err" || ! ip netns add "$ns_b" 2>>"$dir/err"; then
  echo "skipped: cannot make network namespaces here ($(head -n 1 "$dir/err")): the multi-host path is not run"
  exit 77
fi
set -e
ip link add "${tag}va" type veth peer name "${tag}vb"
ip link set "${tag}va" netns "$ns_a"
ip link set "${tag}vb" netns "$ns_b"
ip -n "$ns_a" addr add "$prefix.1/24" dev "${tag}va"
ip -n "$ns_b" addr add "$prefix.2/24" dev "${tag}vb"
for ns in "$ns_a" "$ns_b"; do
  ip -n "$ns" link set lo up
done
ip -n "$ns_a" link set "${tag}va" up
ip -n "$ns_b" link set "${tag}vb" up
set +e

# The launch agent: called as `agent [ssh options] HOST COMMAND...`, like ssh.
cat >"$dir/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1
shift
case \$host in
  nodeA) ns=$ns_a ;;
  nodeB) ns=$ns_b ;;
  *) echo "check-mpi-netns agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$host; \$*"
EOF
chmod +x "$dir/agent"

tx_bytes() { ip -n "$ns_a" -s -j link show "${tag}va" | sed -n 's/.*"tx":{"bytes":\([0-9]*\).*/\1/p'; }
before=$(tx_bytes)
start=$(date +%s)
# Environment the ranks need goes with -x (the daemon on nodeB starts from the agent's).
env_args=""
for v in PYTHONPATH OPENBLAS_NUM_THREADS GS_DIST_TIMEOUT GS_TRACE GS_DDP_TRANSPORT GS_TEST_TRANSPORT; do
  eval "[ -n \"\${$v+set}\" ]" && env_args="$env_args -x $v"
done
# shellcheck disable=SC2086 # env_args is a list of options
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  timeout -k 5 $((max + 30)) ip netns exec "$ns_a" unshare --uts sh -c 'hostname nodeA; exec "$@"' sh \
  mpirun --host nodeA,nodeB -np 2 --mca plm_rsh_agent "$dir/agent" \
  --mca btl tcp,self --mca btl_tcp_if_include "$net" --mca oob_tcp_if_include "$net" \
  $env_args "$@" >"$dir/out" 2>&1
got=$?
took=$(($(date +%s) - start))
after=$(tx_bytes)
sed 's/^/out: /' "$dir/out"
kib=$(((${after:-0} - ${before:-0}) / 1024))
echo "exit status $got after ${took} s; the veth carried $kib KiB from namespace A"
[ "$got" -eq 0 ] || { echo "FAIL: wanted success"; exit 1; }
[ "$took" -le "$max" ] || { echo "FAIL: took ${took} s, more than $max"; exit 1; }
if [ -n "$text" ] && ! grep -qF -- "$text" "$dir/out"; then echo "FAIL: output lacks: $text"; exit 1; fi
[ "$kib" -ge "$min_kib" ] || { echo "FAIL: the veth carried $kib KiB, less than $min_kib: the ranks did not talk over it"; exit 1; }
echo "ok"
