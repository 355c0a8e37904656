#!/usr/bin/python3
"""rnn-torch-compare.py: the engine's recurrent cells and layers against PyTorch's, in f64.

Runs rnn-torch-cases (built by meson from the .c file beside this one) into a temporary
directory, then for each case loads the engine's state dict into the matching torch.nn module
with load_state_dict(strict=True) (so PyTorch's names and shapes are checked too), runs the
same inputs, backpropagates the same random linear loss, and compares outputs, final states and
every gradient. Prints one `rnn_torch_max_diff=` line per case and fails when any difference
exceeds 1e-9.

Skipped (exit 77, meson's skip code) only when Debian's python3-torch is not installed.
Usage: rnn-torch-compare.py RNN_TORCH_CASES_EXE
"""
import json, os, struct, subprocess, sys, tempfile

try:
    import torch
except ImportError:
    print("# skipped: python3-torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

TOLERANCE = 1e-9
DTYPES = {"F64": torch.float64, "F32": torch.float32, "I64": torch.int64}


def load_safetensors(path):
    """The file's tensors and metadata (safetensors: u64 header length, JSON, raw bytes)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = raw[8 + n:]
    tensors = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        flat = torch.frombuffer(bytearray(body[start:end]), dtype=dtype) if end > start \
            else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(info["shape"]).clone()
    return tensors, meta


def torch_module(meta):
    mode, kind = meta["mode"], meta["kind"]
    size = dict(input_size=int(meta["input_size"]), hidden_size=int(meta["hidden_size"]))
    if kind == "cell":
        if mode.startswith("RNN"):
            return torch.nn.RNNCell(**size, nonlinearity=mode[4:].lower())
        return {"LSTM": torch.nn.LSTMCell, "GRU": torch.nn.GRUCell}[mode](**size)
    opts = dict(size, num_layers=int(meta["num_layers"]), bias=meta["bias"] == "1",
                batch_first=meta["batch_first"] == "1",
                bidirectional=meta["bidirectional"] == "1")
    if mode.startswith("RNN"):
        return torch.nn.RNN(**opts, nonlinearity=mode[4:].lower())
    return {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}[mode](**opts)


def leaf(t):
    return t.clone().requires_grad_(True)


def run_torch(meta, data, module):
    """PyTorch's outputs and gradients under the engine's names."""
    x = leaf(data["x"])
    h0 = leaf(data["h0"]) if "h0" in data else None
    c0 = leaf(data["c0"]) if "c0" in data else None
    lstm = meta["mode"] == "LSTM"
    got = {}
    if meta["kind"] == "cell":
        if lstm:
            got["h_n"], got["c_n"] = module(x, (h0, c0))
        else:
            got["h_n"] = module(x, h0)
    else:
        inp = x
        if meta["packed"] == "1":
            inp = torch.nn.utils.rnn.pack_padded_sequence(
                x, data["lengths"], batch_first=meta["batch_first"] == "1", enforce_sorted=False)
        state = None
        if h0 is not None:
            state = (h0, c0) if lstm else h0
        out, hidden = module(inp, state)
        got["out"] = out.data if meta["packed"] == "1" else out
        if lstm:
            got["h_n"], got["c_n"] = hidden
        else:
            got["h_n"] = hidden
    loss = sum((got[k] * data["r_" + k]).sum() for k in ("out", "h_n", "c_n") if k in got)
    loss.backward()
    got["grad.x"] = x.grad
    if h0 is not None:
        got["grad.h0"] = h0.grad
    if c0 is not None:
        got["grad.c0"] = c0.grad
    for name, p in module.named_parameters():
        got["grad." + name] = p.grad
    return got


def compare(case, directory):
    params, _ = load_safetensors(os.path.join(directory, case + ".params.safetensors"))
    data, meta = load_safetensors(os.path.join(directory, case + ".data.safetensors"))
    module = torch_module(meta).double()
    module.load_state_dict(params, strict=True)  # PyTorch's names and shapes, all of them
    got = run_torch(meta, data, module)
    worst, where = 0.0, None
    checked = [k for k in got if k in data]
    missing = sorted(set(got) - set(data))
    if missing:
        sys.exit(f"{case}: the engine wrote no {', '.join(missing)}")
    for key in checked:
        if got[key].shape != data[key].shape:
            sys.exit(f"{case}: {key} has shape {tuple(data[key].shape)} in the engine, "
                     f"{tuple(got[key].shape)} in torch")
        diff = (got[key].detach() - data[key]).abs().max().item() if got[key].numel() else 0.0
        if diff >= worst:
            worst, where = diff, key
    print(f"# {case}: {len(checked)} tensors compared, worst {where}")
    print(f"rnn_torch_max_diff={worst:.3e} case={case}")
    return worst


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run([sys.argv[1], directory], check=True)
        cases = sorted(f[:-len(".data.safetensors")] for f in os.listdir(directory)
                       if f.endswith(".data.safetensors"))
        if not cases:
            sys.exit("rnn-torch-cases wrote no case")
        worst = max(compare(case, directory) for case in cases)
    print(f"# torch {torch.__version__}, {len(cases)} cases, tolerance {TOLERANCE}")
    print(f"rnn_torch_max_diff_all={worst:.3e}")
    if not worst <= TOLERANCE:
        sys.exit(f"the engine and PyTorch differ by {worst:.3e} (> {TOLERANCE})")


main()
