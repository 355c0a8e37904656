"""test_training.py: nn modules, losses, optimizers, state dicts, safetensors and the
DataLoader from Python, checked against PyTorch where PyTorch has the same function."""
import numpy as np
import pytest

import gradscope as gs
import gradscope.nn as nn
import gradscope.nn.functional as F
from gradscope.utils.data import DataLoader, TensorDataset

torch = pytest.importorskip("torch")


def test_linear_and_sequential_name_parameters_as_pytorch():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2, bias=False))
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight"]
    assert model[0].weight.shape == (3, 4) and len(model) == 3
    assert model(gs.ones(5, 4)).shape == (5, 2)


def test_state_dict_round_trip_and_load_into_pytorch():
    model = nn.Linear(3, 2)
    sd = model.state_dict()
    ref = torch.nn.Linear(3, 2)
    ref.load_state_dict({k: torch.from_dlpack(v) for k, v in sd.items()})
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = model(gs.from_numpy(x)).detach().numpy()
    want = ref(torch.from_numpy(x)).detach().numpy()
    assert np.abs(got - want).max() < 1e-6
    other = nn.Linear(3, 2)
    other.load_state_dict(sd)
    assert other.weight.tolist() == model.weight.tolist()
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "weight", "bias"'):
        other.load_state_dict({})


def test_safetensors_file_is_what_pytorch_reads(tmp_path):
    """Read by hand as safetensors.torch.load_file reads it (the package is not in Debian 12):
    an 8-byte little-endian header size, a JSON header of dtype, shape and offsets, the data."""
    import json
    import struct
    model = nn.Sequential(nn.Linear(2, 3))
    path = tmp_path / "m.safetensors"
    model.save_safetensors(str(path))
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    entry = header["0.weight"]
    assert entry["dtype"] == "F32" and entry["shape"] == [3, 2]
    begin, end = entry["data_offsets"]
    weight = torch.frombuffer(bytearray(raw[8 + size + begin:8 + size + end]),
                              dtype=torch.float32).reshape(3, 2)
    assert weight.tolist() == model[0].weight.tolist()


def test_safetensors_round_trip(tmp_path):
    model = nn.Sequential(nn.Linear(2, 2))
    path = str(tmp_path / "m.safetensors")
    model.save_safetensors(path)
    other = nn.Sequential(nn.Linear(2, 2))
    other.load_safetensors(path)
    assert other[0].weight.tolist() == model[0].weight.tolist()


def test_losses_match_pytorch():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((4, 5))
    targets = np.array([1, 0, 4, 2])
    a = F.cross_entropy(gs.tensor(logits), gs.tensor(targets), label_smoothing=0.1).item()
    b = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(targets),
                                          label_smoothing=0.1).item()
    assert abs(a - b) < 1e-12
    a = F.mse_loss(gs.tensor(logits), gs.tensor(logits * 0.5), reduction="sum").item()
    b = torch.nn.functional.mse_loss(torch.tensor(logits), torch.tensor(logits * 0.5),
                                     reduction="sum").item()
    assert abs(a - b) < 1e-9
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(gs.ones(1), gs.ones(1), reduction="avg")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_optimizer_steps_match_pytorch(name):
    w0 = np.array([[0.5, -1.0], [2.0, 0.25]])
    g_w = gs.tensor(w0, requires_grad=True)
    t_w = torch.tensor(w0, requires_grad=True)
    kwargs = {"lr": 0.1, "momentum": 0.9} if name == "SGD" else {"lr": 0.1}
    g_opt = getattr(gs.optim, name)([g_w], **kwargs)
    t_opt = getattr(torch.optim, name)([t_w], **kwargs)
    for _ in range(3):
        (g_w ** 2.0).sum().backward()
        g_opt.step()
        g_opt.zero_grad()
        (t_w ** 2).sum().backward()
        t_opt.step()
        t_opt.zero_grad()
    assert np.abs(g_w.detach().numpy() - t_w.detach().numpy()).max() < 1e-12


def test_data_loader_batches_and_scopes():
    x = gs.arange(10, dtype=gs.float32).view(5, 2)
    y = gs.arange(5)
    loader = DataLoader(TensorDataset(x, y), batch_size=2)
    batches = [(xb.tolist(), yb.tolist()) for xb, yb in loader]
    assert len(loader) == 3 and batches[0] == ([[0.0, 1.0], [2.0, 3.0]], [0, 1])
    assert batches[2] == ([[8.0, 9.0]], [4])
    shuffled = sorted(v for _, yb in DataLoader(TensorDataset(x, y), batch_size=2, shuffle=True)
                      for v in yb.tolist())
    assert shuffled == [0, 1, 2, 3, 4]


def test_a_training_loop_in_scopes_leaves_only_the_parameters():
    gs.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = gs.optim.SGD(model.parameters(), lr=0.1)
    x = gs.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = gs.tensor([[0.0], [1.0], [1.0], [0.0]])
    live = gs.live_tensor_count()
    first = None
    for _ in range(200):
        with gs.dispose_scope("step"):
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)  # the gradients go too, so only parameters stay
            first = first if first is not None else loss.item()
            last = loss.item()
    assert last < first
    assert gs.live_tensor_count() == live


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_recurrent_modules_match_pytorch(name):
    ref = getattr(torch.nn, name)(3, 4, num_layers=2, batch_first=True, dtype=torch.float64)
    mod = getattr(nn, name)(3, 4, num_layers=2, batch_first=True, dtype=gs.float64)
    mod.load_state_dict({k: gs.from_dlpack(v.detach()) for k, v in ref.state_dict().items()})
    x = np.random.default_rng(5).standard_normal((2, 5, 3))
    out, state = mod(gs.tensor(x))
    want, want_state = ref(torch.tensor(x))
    assert np.abs(out.detach().numpy() - want.detach().numpy()).max() < 1e-12
    h, want_h = (state[0], want_state[0]) if name == "LSTM" else (state, want_state)
    assert np.abs(h.detach().numpy() - want_h.detach().numpy()).max() < 1e-12


def test_data_loader_over_numpy_arrays_with_prefetch():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int64)
    loader = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True, prefetch=2)
    batches = list(loader)
    assert len(batches) == 1 and batches[0][1].tolist() == [0, 1, 2, 3]
    assert batches[0][0].tolist() == x[:4].tolist()
    with pytest.raises(TypeError):
        TensorDataset(np.zeros(3, dtype=np.uint16))


class Net(nn.Module):
    """A model written as in PyTorch: a subclass with children, a parameter and forward."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)
        self.scale = nn.Parameter(gs.ones(1))

    def forward(self, x):
        return self.fc2(self.fc1(x).relu()) * self.scale


def test_a_module_subclass_works_as_in_pytorch(tmp_path):
    model = Net()
    names = sorted(n for n, _ in model.named_parameters())
    assert names == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight", "scale"]
    opt = gs.optim.SGD(model.parameters(), lr=0.1)
    x = gs.randn(3, 4)
    before = model.scale.item()
    with gs.dispose_scope("step"):
        model(x).sum().backward()
        opt.step()
    assert model.scale.item() != before
    path = str(tmp_path / "net.safetensors")
    model.save_safetensors(path)
    other = Net()
    other.load_safetensors(path)
    assert other.fc1.weight.tolist() == model.fc1.weight.tolist()
    assert isinstance(model, nn.Module)
