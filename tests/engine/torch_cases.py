"""torch_cases.py: what the engine's comparisons with PyTorch share (ops/ops-torch-compare.py,
nn/rnn-torch-compare.py): torch imported or the test skipped, a cases program run into a
temporary directory, and its safetensors files read back as torch tensors."""
import json, os, struct, subprocess, sys, tempfile

try:
    import torch
except ImportError:
    print("# skipped: python3-torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

DTYPES = {"F64": torch.float64, "F32": torch.float32, "I64": torch.int64, "BOOL": torch.bool}


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


def run_cases(usage, suffix, compare):
    """Runs the cases program given as the only argument into a temporary directory and
    returns [compare(case, directory) for each case], a case being a file name ending in
    suffix without it. Exits with usage when the arguments are not one program."""
    if len(sys.argv) != 2:
        sys.exit(usage)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run([sys.argv[1], directory], check=True)
        cases = sorted(f[:-len(suffix)] for f in os.listdir(directory) if f.endswith(suffix))
        if not cases:
            sys.exit(f"{os.path.basename(sys.argv[1])} wrote no case")
        return [compare(case, directory) for case in cases]
