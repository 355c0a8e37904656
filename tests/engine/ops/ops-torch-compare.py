#!/usr/bin/python3
"""ops-torch-compare.py: the engine's convolution, pooling, batch norm and the other ops
added for PyTorch programs, against PyTorch 1.13, forward and backward.

Runs ops-torch-cases (built by meson from the .c file beside this one) into a temporary
directory. Each case file holds the inputs, the engine's outputs, the random weights r of a
linear loss sum(out * r) and the engine's gradients of that loss; here the same op runs in
torch on the same inputs (named by the case's metadata, with its arguments as torch's
keywords), the same loss is backpropagated, and outputs and gradients are compared: to 1e-9 for
f64, to 1e-5 relative to the largest magnitude for f32, exactly for integer outputs (indices).
Prints one `ops_torch_max_diff=` line per case.

Skipped (exit 77, meson's skip code) only when Debian's python3-torch is not installed.
Usage: ops-torch-compare.py OPS_TORCH_CASES_EXE
"""
import json
import os, sys

# torch_cases.py is in tests/engine/, shared with the other comparison; no __pycache__ in the
# source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_cases import load_safetensors, run_cases, torch  # skips without torch
import torch.nn.functional as F

TOLERANCE = {torch.float64: 1e-9, torch.float32: 1e-5}


def outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


# What each op name runs in torch: inputs (None for an absent optional one) and keywords.
OPS = {
    "conv2d": lambda i, a: F.conv2d(i[0], i[1], i[2], **a),
    "conv_transpose2d": lambda i, a: F.conv_transpose2d(i[0], i[1], i[2], **a),
    "conv1d": lambda i, a: F.conv1d(i[0], i[1], i[2], **a),
    "max_pool2d": lambda i, a: F.max_pool2d(i[0], return_indices=True, **a),
    "avg_pool2d": lambda i, a: F.avg_pool2d(i[0], **a),
    "sin": lambda i, a: torch.sin(i[0]),
    "cos": lambda i, a: torch.cos(i[0]),
    "tan": lambda i, a: torch.tan(i[0]),
    "var": lambda i, a: torch.var(i[0], **a),
    "std": lambda i, a: torch.std(i[0], **a),
    **{name: (lambda f: lambda i, a: f(i[0], **a))(getattr(F, name))
       for name in ("silu", "elu", "selu", "softplus", "hardtanh", "relu6", "hardsigmoid",
                    "hardswish", "logsigmoid", "mish")},
    "masked_fill": lambda i, a: i[0].masked_fill(i[1], a["value"]),
    # outputs: y, then the running estimates after their update
    "batch_norm": lambda i, a: (lambda rm, rv: (F.batch_norm(i[0], rm, rv, i[3], i[4], **a),
                                                rm, rv))(i[1].clone(), i[2].clone()),
}


def compare(case, directory):
    data, meta = load_safetensors(os.path.join(directory, case + ".safetensors"))
    n_in, requires = int(meta["n_in"]), meta["requires"]
    inputs = []
    for i in range(n_in):
        t = data.get(f"in{i}")
        if t is not None and requires[i] == "1":
            t = t.clone().requires_grad_(True)
        inputs.append(t)
    print(f"# {case}: {meta['op']}({meta['args']})", flush=True)
    got = outputs(OPS[meta["op"]](inputs, json.loads(meta["args"])))
    loss = None
    for k, out in enumerate(got):
        if f"r{k}" in data:
            part = (out * data[f"r{k}"]).sum()
            loss = part if loss is None else loss + part
    if loss is not None:
        loss.backward()
    pairs = [(f"out{k}", out.detach()) for k, out in enumerate(got)]
    pairs += [(f"grad{i}", t.grad) for i, t in enumerate(inputs)
              if t is not None and requires[i] == "1"]
    worst, where = 0.0, None
    for key, want in pairs:
        have = data.get(key)
        if have is None:
            sys.exit(f"{case}: the engine wrote no {key}")
        if want is None:
            sys.exit(f"{case}: torch computed no {key}")
        if have.shape != want.shape or have.dtype != want.dtype:
            sys.exit(f"{case}: {key} is {tuple(have.shape)} {have.dtype} in the engine, "
                     f"{tuple(want.shape)} {want.dtype} in torch")
        if not want.is_floating_point():
            if not torch.equal(have, want):
                sys.exit(f"{case}: {key} differs\nengine {have}\ntorch {want}")
            continue
        if want.numel() == 0:
            continue
        if not torch.equal(torch.isnan(have), torch.isnan(want)):
            sys.exit(f"{case}: {key} has NaN in other places")
        scale = max(1.0, want.abs().nan_to_num().max().item())
        diff = ((have - want).abs().nan_to_num().max().item()) / scale
        if diff > TOLERANCE[want.dtype]:
            sys.exit(f"{case}: {key} differs by {diff:.3e} (> {TOLERANCE[want.dtype]})")
        if diff >= worst:
            worst, where = diff, key
    print(f"# {case}: {len(pairs)} tensors compared, worst {where}")
    print(f"ops_torch_max_diff={worst:.3e} case={case}")
    return len(pairs)


def main():
    counts = run_cases(__doc__, ".safetensors", compare)
    print(f"# torch {torch.__version__}: {len(counts)} cases, {sum(counts)} tensors agree")


main()
