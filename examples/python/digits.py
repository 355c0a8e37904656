#!/usr/bin/env python3
"""digits.py: the digits MLP of examples/digits-mlp, in Python on the gradscope module.

Same recipe as the C example (and bench/compare-torch/digits.py in PyTorch): the 8x8 digits,
the first 1437 rows for training and the last 360 for testing, pixels standardised per pixel
with the training rows' mean and standard deviation, Linear(64, 128) - ReLU - Linear(128, 10),
Adam with lr 3e-3, shuffled batches of 16 from a DataLoader, cross-entropy with label smoothing
0.2, 30 epochs. Every training step runs in its own dispose scope, so each step's batch and
intermediates are gone when the next starts. The code reads as PyTorch code: only the import
differs.

Usage: digits.py [path/to/digits.csv or digits.csv.gz]. Ends with machine-readable lines:
digits_seconds=, live_tensors=, train_accuracy=, test_accuracy=. Exits non-zero if training
failed (train accuracy under 0.95) or tensors leaked.
"""
import gzip
import os
import sys
import time

import numpy as np

import gradscope as gs
import gradscope.nn as nn
import gradscope.nn.functional as F
from gradscope.utils.data import DataLoader, TensorDataset

ROWS, PIXELS, TRAIN, HIDDEN, CLASSES = 1797, 64, 1437, 128, 10
EPOCHS, BATCH, LR, LABEL_SMOOTHING = 30, 16, 3e-3, 0.2


def load_digits(path=None):
    """(pixels, labels) from the CSV at path (or .gz), the bundled data/digits.csv.gz if None."""
    if path is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data",
                            "digits.csv.gz")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64)
    if table.shape != (ROWS, PIXELS + 1):
        sys.exit(f"digits.py: {path}: expected {ROWS} rows of 65 numbers, got {table.shape}")
    return table[:, :PIXELS].astype(np.float32), np.ascontiguousarray(table[:, PIXELS])


def standardise(x):
    """(x - mean) / std per pixel with the training rows' statistics (unbiased std; pixels that
    never vary keep std 1)."""
    with gs.dispose_scope("standardise"):
        train = x[:TRAIN]
        mean = train.mean(dim=0, keepdim=True)
        centred = train - mean
        std = ((centred * centred).sum(dim=0, keepdim=True) / float(TRAIN - 1)).sqrt()
        safe = gs.where(std == 0.0, gs.ones_like(std), std)
        return ((x - mean) / safe).move_to_outer()


def split_tensors(pixels, labels):
    """The recipe's tensors from the CSV's arrays: seeds the generator, standardises, and
    returns (x_train, y_train, x_test, y_test), views of the first 1437 rows and the rest."""
    gs.manual_seed(0)
    x_all = standardise(gs.from_numpy(pixels))
    y_all = gs.from_numpy(labels)
    return x_all[:TRAIN], y_all[:TRAIN], x_all[TRAIN:], y_all[TRAIN:]


def mlp():
    return nn.Sequential(nn.Linear(PIXELS, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def accuracy(model, x, y):
    with gs.dispose_scope("evaluate"), gs.no_grad():
        predicted = model(x).argmax(dim=1)
        return (predicted == y).sum().item() / y.shape[0]


def main():
    pixels, labels = load_digits(sys.argv[1] if len(sys.argv) > 1 else None)
    start = time.perf_counter()
    x_train, y_train, x_test, y_test = split_tensors(pixels, labels)

    model = mlp()
    print("parameters: " + ", ".join(f"{name} {'x'.join(map(str, p.shape))}"
                                     for name, p in model.named_parameters()))
    optimizer = gs.optim.Adam(model.parameters(), lr=LR)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=BATCH, shuffle=True, seed=0)

    for epoch in range(1, EPOCHS + 1):
        gs.trace_mark(f"epoch {epoch}")
        loss_sum, steps = 0.0, 0
        for xb, yb in loader:
            with gs.dispose_scope("train step"):
                loss = F.cross_entropy(model(xb), yb, label_smoothing=LABEL_SMOOTHING)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                loss_sum += loss.item()
                steps += 1
            # The batch was taken before the step's scope opened, so the program owns it:
            # rebinding xb, yb next time drops and disposes it.
        if epoch % 5 == 0 or epoch == 1:
            print(f"epoch {epoch:2d}  loss {loss_sum / steps:.4f}  "
                  f"train accuracy {accuracy(model, x_train, y_train):.4f}", flush=True)

    test_acc = accuracy(model, x_test, y_test)
    train_acc = accuracy(model, x_train, y_train)
    seconds = time.perf_counter() - start
    del xb, yb, loader, optimizer, model, x_train, y_train, x_test, y_test
    live = gs.live_tensor_count()
    print(f"digits_seconds={seconds:.3f}")
    print(f"live_tensors={live}")
    print(f"train_accuracy={train_acc:.4f}")
    print(f"test_accuracy={test_acc:.4f}")
    return 0 if train_acc >= 0.95 and live == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
