# mlp.py: bench/bench-mlp.c in PyTorch, for comparison: MLP 784-512-512-10 (ReLU), one random
# batch of 128 f32 rows made once (seeded), cross_entropy (mean), SGD lr 0.01 momentum 0.9;
# each step is forward (with the loss), backward, step, zero_grad. 20 warm-up steps, then the
# medians of 200 timed steps, per phase and whole, and the peak RSS (VmHWM), printed with the
# same keys as bench-mlp prefixed by torch_.
# Usage: /usr/bin/python3 bench/compare-torch/mlp.py
# GS_TORCH_THREADS=N sets torch.set_num_threads(N) (default 2, the comparison's budget).
import os, statistics, sys, time, torch
from timing import peak_rss_mib, timed_steps

threads = int(os.environ.get('GS_TORCH_THREADS') or 2)
torch.set_num_threads(threads)
torch.manual_seed(42)
BATCH, IN, HIDDEN, CLASSES, WARMUP, TIMED = 128, 784, 512, 10, 20, 200
model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                            torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                            torch.nn.Linear(HIDDEN, CLASSES))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(BATCH, IN)
y = torch.randint(0, CLASSES, (BATCH,))

def step():
    t0 = time.perf_counter()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    opt.step()
    opt.zero_grad(set_to_none=True)  # as the engine (and torch 2.x by default)
    value = loss.item()
    del loss
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, t3 - t0, value

first, samples = timed_steps(step, WARMUP, TIMED, 4, 'mlp.py')
last = samples[-1]
med = lambda i: statistics.median(s[i] for s in samples) * 1e3
print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads; loss {first[4]:.4f} at step 1, "
      f"{last[4]:.4f} at step {WARMUP + TIMED}")
print(f"torch_mlp_step_ms={med(3):.4g} ms")
print(f"torch_mlp_forward_ms={med(0):.4g} ms")
print(f"torch_mlp_backward_ms={med(1):.4g} ms")
print(f"torch_mlp_optimizer_ms={med(2):.4g} ms")
print(f"torch_mlp_peak_rss_mib={peak_rss_mib():.4g} MiB")
