# digits.py: examples/digits-mlp in PyTorch, for comparison: the same split (first 1437 rows
# train, last 360 test), scaling (per-pixel standardisation with the training rows' mean and
# unbiased std, 1 where a pixel never varies), model (64-128-10, ReLU, torch's default init),
# Adam (lr 3e-3), batch size 16, label smoothing 0.2 and 30 epochs. Prints digits_seconds=
# timed as the example times itself: from the parsed rows to the final evaluation (not
# Python's start-up or the import of torch).
# Usage: python3 bench/compare-torch/digits.py [label_smoothing] [seed]
# GS_TORCH_THREADS=N sets torch.set_num_threads(N) (unset: torch's default).
# (Debian's python3-torch: apt-get install python3-torch; run with /usr/bin/python3.)
import gzip, os, sys, time, torch
if os.environ.get('GS_TORCH_THREADS'):
    torch.set_num_threads(int(os.environ['GS_TORCH_THREADS']))
torch.manual_seed(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
smoothing = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
rows = [list(map(int, l.split(','))) for l in gzip.open(os.path.join(os.path.dirname(__file__), '..', '..', 'data', 'digits.csv.gz'), 'rt')]
start = time.perf_counter()
x = torch.tensor([r[:64] for r in rows], dtype=torch.float32)
y = torch.tensor([r[64] for r in rows])
xtr, ytr, xte, yte = x[:1437], y[:1437], x[1437:], y[1437:]
mean, std = xtr.mean(0), xtr.std(0)
std[std == 0] = 1
xtr, xte = (xtr - mean) / std, (xte - mean) / std
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(30):
    perm = torch.randperm(1437)
    for b in range(0, 1437, 16):
        idx = perm[b:b + 16]
        loss = torch.nn.functional.cross_entropy(model(xtr[idx]), ytr[idx], label_smoothing=smoothing)
        opt.zero_grad(); loss.backward(); opt.step()
with torch.no_grad():
    tr = (model(xtr).argmax(1) == ytr).float().mean().item()
    te = (model(xte).argmax(1) == yte).float().mean().item()
seconds = time.perf_counter() - start
print(f"smoothing={smoothing} train_accuracy={tr:.4f} test_accuracy={te:.4f}")
print(f"digits_seconds={seconds:.3f}")
