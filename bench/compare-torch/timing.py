# timing.py: what the PyTorch side of the comparisons shares: the warm-up and timed steps, the
# check that training moved the loss, and the peak RSS.
import sys


def peak_rss_mib():
    """The process's peak resident set (VmHWM) in MiB, or nan where /proc does not say."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024.0
    return float('nan')


def timed_steps(step, warmup, timed, loss_at, program):
    """Runs step warmup times, then timed times; returns the first step's result and the timed
    ones'. Exits naming program when the loss (loss_at in a result) did not fall."""
    first = step()
    for _ in range(warmup - 1):
        step()
    samples = [step() for _ in range(timed)]
    if not samples[-1][loss_at] < first[loss_at]:
        sys.exit(f"{program}: the loss did not fall ({first[loss_at]} at the first step, "
                 f"{samples[-1][loss_at]} at the last)")
    return first, samples
