#!/usr/bin/env python3
"""train.py: examples/digits-ddp (main.c) in Python: the digits MLP trained data-parallel
over Open MPI with gradscope.distributed, as a PyTorch DDP program reads. Run it as

    mpirun -np 2 /usr/bin/python3 examples/digits-ddp/train.py [path/to/digits.csv(.gz)]

Every rank builds the same MLP (DistributedDataParallel broadcasts rank 0's parameters
anyway), reads its shard of the 1437 training rows through a DistributedSampler (reshuffled
every epoch from one seed, padded as PyTorch pads) and takes batches of 16: one step sees
16 x world rows, whose averaged gradient every rank applies with Adam, so the ranks'
parameters stay equal (DDP compares their checksums every 50 forwards). The data, the
standardisation and the evaluation are examples/python/digits.py's. Rank 0 ends with
machine-readable lines: ddp_world_size=, ddp_buckets=, ddp_steps=, digits_seconds=,
live_tensors=, train_accuracy=, test_accuracy=. Exits non-zero if training failed (train
accuracy under 0.95) or tensors leaked.
"""
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))

import gradscope as gs  # noqa: E402
import gradscope.distributed as dist  # noqa: E402
import gradscope.nn.functional as F  # noqa: E402
from digits import LABEL_SMOOTHING, LR, accuracy, load_digits, mlp, split_tensors  # noqa: E402
from gradscope.distributed import DistributedDataParallel, DistributedSampler  # noqa: E402
from gradscope.utils.data import DataLoader, TensorDataset  # noqa: E402

EPOCHS, BATCH = 30, 16


def main():
    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    pixels, labels = load_digits(sys.argv[1] if len(sys.argv) > 1 else None)
    start = time.perf_counter()
    x_train, y_train, x_test, y_test = split_tensors(pixels, labels)

    model = mlp()  # Linear(64, 128), ReLU, Linear(128, 10)
    if rank == 0:
        print("parameters: " + ", ".join(f"{name} {'x'.join(map(str, p.shape))}"
                                         for name, p in model.named_parameters()), flush=True)
    ddp = DistributedDataParallel(model, check_every=50)
    optimizer = gs.optim.Adam(ddp.parameters(), lr=LR)
    train_set = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(train_set, shuffle=True, seed=0)
    loader = DataLoader(train_set, batch_size=BATCH, sampler=sampler)

    for epoch in range(1, EPOCHS + 1):
        gs.trace_mark(f"epoch {epoch}")
        sampler.set_epoch(epoch)
        loss_sum, steps = 0.0, 0
        for xb, yb in loader:
            with gs.dispose_scope("train step"):
                loss = F.cross_entropy(ddp(xb), yb, label_smoothing=LABEL_SMOOTHING)
                loss.backward()  # its end waits for the averaged gradients
                optimizer.step()
                optimizer.zero_grad()
                loss_sum += loss.item()
                steps += 1
        if rank == 0 and (epoch % 5 == 0 or epoch == 1):
            print(f"epoch {epoch:2d}  loss {loss_sum / steps:.4f}  "
                  f"train accuracy {accuracy(model, x_train, y_train):.4f}", flush=True)

    test_acc = accuracy(model, x_test, y_test)
    train_acc = accuracy(model, x_train, y_train)
    seconds = time.perf_counter() - start
    stats = ddp.ddp_stats()
    del xb, yb, loader, sampler, train_set, optimizer, ddp, model
    del x_train, y_train, x_test, y_test
    live = gs.live_tensor_count()
    if rank == 0:
        print(f"ddp_world_size={world}")
        print(f"ddp_buckets={stats['n_buckets']}")
        print(f"ddp_steps={stats['steps']}")
        print(f"ddp_bytes_reduced={stats['bytes_reduced']}")
        print(f"digits_seconds={seconds:.3f}")
        print(f"live_tensors={live}")
        print(f"train_accuracy={train_acc:.4f}")
        print(f"test_accuracy={test_acc:.4f}", flush=True)
    dist.destroy_process_group()
    return 0 if train_acc >= 0.95 and live == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
