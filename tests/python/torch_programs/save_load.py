# torch.save / torch.load: a state dict into a new model, views sharing one storage,
# non-contiguous tensors, dtypes and plain containers, a file object, and a truncated file.
import io
import os
import tempfile

import torch
import torch.nn as nn


def fill(module, salt):
    with torch.no_grad():
        for i, (_, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((k * 0.37 + i + salt).sin().mul(0.5).view(p.shape))


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
fill(model, 0.0)
x = torch.arange(8, dtype=torch.float32).view(2, 4) / 8
folder = tempfile.mkdtemp()
path = os.path.join(folder, "model.pt")
torch.save(model.state_dict(), path)

copy = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
fill(copy, 1.0)
print("before", [round(v, 6) for v in copy(x).flatten().tolist()])
state = torch.load(path)
print("loaded", type(state).__name__, list(state.keys()))
print("load_state_dict", copy.load_state_dict(state))
print("after", [round(v, 6) for v in copy(x).flatten().tolist()])
print("same", copy(x).tolist() == model(x).tolist())
print("requires_grad", [p.requires_grad for p in copy.parameters()])

# Views of one storage: saved once (offset and strides into it), still sharing memory after
# loading. (gradscope's loaded views start at their first element: storage_offset() is 0.)
base = torch.arange(12, dtype=torch.float32).view(3, 4)
views = {"base": base, "t": base.t(), "row": base[1], "col": base[:, 2], "step": base[::2, 1::2]}
buf = io.BytesIO()
torch.save(views, buf)
buf.seek(0)
back = torch.load(buf)
for name in ["base", "t", "row", "col", "step"]:
    v = back[name]
    print(name, list(v.shape), v.stride(), v.is_contiguous(), v.tolist())
back["base"][1, 2] = 100.0
print("shared after load", back["t"][2, 1].item(), back["row"][2].item(), back["col"][1].item())

# dtypes and plain containers.
things = {
    "f32": torch.tensor([1.5, -2.25]),
    "f64": torch.tensor([[0.1, 0.2]], dtype=torch.float64),
    "i64": torch.tensor([3, -4, 5]),
    "bool": torch.tensor([True, False, True]),
    "scalar": torch.tensor(7.0),
    "list": [torch.ones(2), 3, "three", 3.5],
    "tuple": (torch.zeros(1, dtype=torch.int64), None, True),
    "nested": {"a": {"b": [torch.full((2, 2), 0.5)]}},
}
torch.save(things, path)
back = torch.load(path, map_location="cpu")
for name, value in back.items():
    if isinstance(value, torch.Tensor):
        print(name, str(value.dtype).split(".")[-1], list(value.shape), value.tolist())
print("list", [v.tolist() if isinstance(v, torch.Tensor) else v for v in back["list"]])
print("tuple", [v.tolist() if isinstance(v, torch.Tensor) else v for v in back["tuple"]])
print("nested", back["nested"]["a"]["b"][0].tolist())

# A tensor that required grad comes back as a leaf that requires grad.
w = torch.tensor([1.0, 2.0], requires_grad=True)
torch.save(w, path)
w2 = torch.load(path)
(w2 * w2).sum().backward()
print("grad", w2.requires_grad, w2.is_leaf, w2.grad.tolist())

# A truncated file is refused with an error, not a crash.
with open(path, "rb") as f:
    data = f.read()
with open(path, "wb") as f:
    f.write(data[: len(data) // 2])
try:
    torch.load(path)
    print("truncated: loaded")
except RuntimeError:
    print("truncated: RuntimeError")
os.remove(path)
os.rmdir(folder)
