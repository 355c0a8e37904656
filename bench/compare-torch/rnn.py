# rnn.py: bench/bench-rnn.c in PyTorch, for comparison: a packed LSTM or GRU step, input 64,
# hidden 128, one layer, batch 32, lengths uniform in 5..50 (seeded, made once), packed with
# enforce_sorted=False; h_n[-1] -> Linear(128, 10) -> cross_entropy -> backward -> SGD lr 0.01.
# 5 warm-up steps, then the median of 40 timed steps (wall and the process's CPU time), and
# the peak RSS (VmHWM), printed with bench-rnn's keys prefixed by torch_.
# Usage: /usr/bin/python3 bench/compare-torch/rnn.py lstm|gru [packed|padded]
# GS_TORCH_THREADS=N sets torch.set_num_threads(N) (default 2, the comparison's budget).
import os, statistics, sys, time, torch
from timing import peak_rss_mib, timed_steps

mode = sys.argv[1] if len(sys.argv) > 1 else ''
layout = sys.argv[2] if len(sys.argv) > 2 else 'packed'
if mode not in ('lstm', 'gru') or layout not in ('packed', 'padded'):
    sys.exit('usage: rnn.py lstm|gru [packed|padded]')
torch.set_num_threads(int(os.environ.get('GS_TORCH_THREADS') or 2))
torch.manual_seed(42)
BATCH, IN, HIDDEN, CLASSES, MIN_LEN, MAX_LEN, WARMUP, TIMED = 32, 64, 128, 10, 5, 50, 5, 40
rnn = (torch.nn.LSTM if mode == 'lstm' else torch.nn.GRU)(IN, HIDDEN)
fc = torch.nn.Linear(HIDDEN, CLASSES)
opt = torch.optim.SGD(list(rnn.parameters()) + list(fc.parameters()), lr=0.01)
lengths = torch.randint(MIN_LEN, MAX_LEN + 1, (BATCH,))
x = torch.randn(MAX_LEN, BATCH, IN)
x[torch.arange(MAX_LEN)[:, None] >= lengths[None, :]] = 0  # padding, as bench-rnn
y = torch.randint(0, CLASSES, (BATCH,))

def step():
    t0, c0 = time.perf_counter(), time.process_time()
    inp = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False) \
        if layout == 'packed' else x
    _, hidden = rnn(inp)
    h_n = hidden[0] if mode == 'lstm' else hidden
    loss = torch.nn.functional.cross_entropy(fc(h_n[-1]), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    value = loss.item()
    return time.perf_counter() - t0, value, time.process_time() - c0

first, samples = timed_steps(step, WARMUP, TIMED, 1, 'rnn.py')
print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads; loss {first[1]:.4f} at step 1, "
      f"{samples[-1][1]:.4f} at step {WARMUP + TIMED}")
print(f"torch_{mode}_{layout}_step_ms={statistics.median(s[0] for s in samples) * 1e3:.4g} ms")
print(f"torch_{mode}_{layout}_step_cpu_ms={statistics.median(s[2] for s in samples) * 1e3:.4g} ms")
print(f"torch_{mode}_{layout}_peak_rss_mib={peak_rss_mib():.4g} MiB")
