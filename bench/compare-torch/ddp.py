# ddp.py: bench/bench-ddp.c's "mlp" mode in PyTorch, for run-ddp.sh: the MLP 784-512-512-10
# (ReLU), cross_entropy, SGD lr 0.01 momentum 0.9 on a global batch of 256 f32 rows split over
# the ranks. With WORLD_SIZE > 1 (run-ddp.sh starts one process per rank with RANK, WORLD_SIZE,
# MASTER_ADDR=127.0.0.1 and MASTER_PORT) it trains through
# torch.nn.parallel.DistributedDataParallel over the gloo backend (init_method env://);
# alone, without DDP. Rank 0 prints the median step over 100 steps after 20 warm-up:
# torch_ddp_step_ms=, torch_ddp_samples_per_s=.
# GS_TORCH_THREADS=N sets torch.set_num_threads(N) (default 1: one thread per rank).
import os, statistics, sys, time, torch

torch.set_num_threads(int(os.environ.get('GS_TORCH_THREADS') or 1))
GLOBAL_BATCH, IN, HIDDEN, CLASSES, WARMUP, TIMED = 256, 784, 512, 10, 20, 100
world = int(os.environ.get('WORLD_SIZE', '1'))
rank = int(os.environ.get('RANK', '0'))
if world > 1:
    torch.distributed.init_process_group('gloo', init_method='env://', rank=rank,
                                         world_size=world)
torch.manual_seed(42)
model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                            torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                            torch.nn.Linear(HIDDEN, CLASSES))
# GS_BENCH_BUCKET_VIEW=1: gradient_as_bucket_view=True, as run-ddp.sh asks both sides.
view = os.environ.get('GS_BENCH_BUCKET_VIEW') == '1'
net = (torch.nn.parallel.DistributedDataParallel(model, gradient_as_bucket_view=view)
       if world > 1 else model)
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
torch.manual_seed(1000 + rank)
x = torch.randn(GLOBAL_BATCH // world, IN)
y = torch.randint(0, CLASSES, (GLOBAL_BATCH // world,))

times, losses = [], []
for i in range(WARMUP + TIMED):
    t0 = time.perf_counter()
    loss = torch.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    losses.append(loss.item())
    if i >= WARMUP:
        times.append(time.perf_counter() - t0)
if not losses[-1] < losses[0]:
    sys.exit(f"ddp.py: rank {rank}: the loss did not fall ({losses[0]}, then {losses[-1]})")
if rank == 0:
    ms = statistics.median(times) * 1e3
    print(f"# torch {torch.__version__}, {'DDP gloo' if world > 1 else 'one process'}, "
          f"world {world}, {torch.get_num_threads()} thread(s) per rank; "
          f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(f"torch_ddp_step_ms={ms:.4g} ms")
    print(f"torch_ddp_samples_per_s={GLOBAL_BATCH / (ms * 1e-3):.4g} samples/s")
if world > 1:
    torch.distributed.destroy_process_group()
