"""Conv2d, pooling, BatchNorm, the trig and moment methods, the containers and Module's tree
walks and print(model) text, each checked against PyTorch 1.13 where it is installed."""
import numpy as np
import pytest

import gradscope as gs
import gradscope.nn as nn
import gradscope.nn.functional as F


def values(*shape, salt=0):
    n = int(np.prod(shape))
    return (((np.arange(n) * 7919 + salt * 104729) % 1000) / 500.0 - 1.0).astype(np.float32).reshape(shape)


def test_conv2d_and_pools_match_torch_with_gradients():
    torch = pytest.importorskip("torch")
    x_np, w_np, b_np = values(2, 2, 7, 6), values(4, 1, 3, 2, salt=1), values(4, salt=2)
    x, w, b = (gs.tensor(a, requires_grad=True) for a in (x_np, w_np, b_np))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x_np, w_np, b_np))
    y = F.conv2d(x, w, b, stride=(2, 1), padding=1, groups=2)
    ty = torch.nn.functional.conv2d(tx, tw, tb, stride=(2, 1), padding=1, groups=2)
    z = F.max_pool2d(y, 2, stride=1).sin().sum() + F.avg_pool2d(y, (2, 3), padding=1).cos().sum()
    tz = (torch.nn.functional.max_pool2d(ty, 2, stride=1).sin().sum()
          + torch.nn.functional.avg_pool2d(ty, (2, 3), padding=1).cos().sum())
    z.backward()
    tz.backward()
    assert y.shape == tuple(ty.shape)
    np.testing.assert_allclose(z.item(), tz.item(), rtol=1e-5)
    for a, ta in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_max_pool2d_return_indices():
    x = gs.tensor(values(1, 1, 4, 4))
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert idx.dtype == gs.int64 and out.shape == idx.shape == (1, 1, 2, 2)
    flat = x.flatten().tolist()
    assert [flat[i] for i in idx.flatten().tolist()] == pytest.approx(out.flatten().tolist())


def test_conv2d_module_is_initialised_in_pytorchs_range_and_takes_its_paddings():
    conv = nn.Conv2d(3, 5, 3)
    bound = 1.0 / np.sqrt(3 * 3 * 3)
    assert [n for n, _ in conv.named_parameters()] == ["weight", "bias"]
    assert conv.weight.shape == (5, 3, 3, 3)
    assert abs(conv.bias).max().item() <= bound
    assert nn.Conv2d(3, 5, 3, padding="same")(gs.ones(1, 3, 6, 7)).shape == (1, 5, 6, 7)
    # the zeros do not split evenly: the odd one on the far side (test_conv_modes.py: torch's)
    assert nn.Conv2d(3, 5, 4, padding="same")(gs.ones(1, 3, 6, 7)).shape == (1, 5, 6, 7)
    assert nn.Conv2d(3, 5, 3, padding_mode="reflect")(gs.ones(1, 3, 6, 7)).shape == (1, 5, 4, 5)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 5, 3, padding_mode="mirror")


def test_batch_norm_keeps_running_stats_as_buffers_and_switches_with_eval():
    torch = pytest.importorskip("torch")
    x_np = values(6, 3, 2, 2) * 2 + 0.5
    bn, tbn = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    assert len(list(bn.parameters())) == 2
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert list(bn.state_dict()) == list(tbn.state_dict())
    for _ in range(2):
        np.testing.assert_allclose(bn(gs.tensor(x_np)).detach().numpy(),
                                   tbn(torch.tensor(x_np)).detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), tbn.running_var.numpy(), rtol=1e-5)
    bn.eval(), tbn.eval()
    assert not bn.training
    np.testing.assert_allclose(bn(gs.tensor(x_np)).detach().numpy(), tbn(torch.tensor(x_np)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    bn1 = nn.BatchNorm1d(4)
    assert bn1(gs.tensor(values(5, 4))).shape == (5, 4)


def test_trig_var_std_and_masked_fill_as_methods_and_functions():
    torch = pytest.importorskip("torch")
    a = values(3, 4)
    t, tt = gs.tensor(a), torch.tensor(a)
    for name in ("sin", "cos", "tan"):
        np.testing.assert_allclose(getattr(t, name)().numpy(), getattr(tt, name)().numpy(), rtol=1e-6)
        np.testing.assert_allclose(getattr(gs, name)(t).numpy(), getattr(torch, name)(tt).numpy(), rtol=1e-6)
    np.testing.assert_allclose(t.var().item(), tt.var().item(), rtol=1e-6)
    np.testing.assert_allclose(t.std(1, keepdim=True).numpy(), tt.std(1, keepdim=True).numpy(), rtol=1e-6)
    np.testing.assert_allclose(t.var(0, unbiased=False).numpy(), tt.var(0, unbiased=False).numpy(), rtol=1e-6)
    np.testing.assert_allclose(gs.std(t, correction=0).item(), tt.std(unbiased=False).item(), rtol=1e-6)
    np.testing.assert_allclose(t.masked_fill(t > 0, -1.0).numpy(), tt.masked_fill(tt > 0, -1.0).numpy())
    u = gs.tensor(a)
    assert u.masked_fill_(u < 0, gs.tensor(0.0)) is u and u.min().item() == 0.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Flatten())
        self.heads = nn.ModuleList([nn.Linear(16, 3), nn.Linear(16, 2, bias=False)])
        self.extra = nn.ModuleDict({"id": nn.Identity(), "pool": nn.AvgPool2d(2)})

    def forward(self, x):
        h = self.features(x)
        return [head(h) for head in self.heads]


def test_print_model_is_pytorchs_text():
    torch = pytest.importorskip("torch")

    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            tn = torch.nn
            self.features = tn.Sequential(tn.Conv2d(1, 4, 3, padding=1), tn.ReLU(), tn.MaxPool2d(2),
                                          tn.Flatten())
            self.heads = tn.ModuleList([tn.Linear(16, 3), tn.Linear(16, 2, bias=False)])
            self.extra = tn.ModuleDict({"id": tn.Identity(), "pool": tn.AvgPool2d(2)})

    assert repr(Net()).replace("Net(", "X(", 1) == repr(TorchNet()).replace("TorchNet(", "X(", 1)
    assert repr(nn.Conv2d(2, 3, (1, 2), stride=2, dilation=(2, 1), groups=1, bias=False)) == \
        repr(torch.nn.Conv2d(2, 3, (1, 2), stride=2, dilation=(2, 1), groups=1, bias=False))
    assert repr(nn.BatchNorm1d(7)) == repr(torch.nn.BatchNorm1d(7))


def test_module_tree_walks_and_containers():
    net = Net()
    assert [n for n, _ in net.named_children()] == ["features", "heads", "extra"]
    assert [n for n, _ in net.named_modules()] == [
        "", "features", "features.0", "features.1", "features.2", "features.3", "heads",
        "heads.0", "heads.1", "extra", "extra.id", "extra.pool"]
    assert [n for n, _ in net.named_parameters()] == [
        "features.0.weight", "features.0.bias", "heads.0.weight", "heads.0.bias", "heads.1.weight"]
    assert len(net.heads) == 2 and isinstance(net.heads[1], nn.Module)
    assert list(net.extra) == ["id", "pool"] and "pool" in net.extra
    outs = net(gs.tensor(values(2, 1, 4, 4)))
    assert [o.shape for o in outs] == [(2, 3), (2, 2)]
    seen = []
    assert net.apply(lambda m: seen.append(m._get_name())) is net
    assert seen[-1] == "Net" and seen[0] == "Conv2d"
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    assert net.float() is net
    assert net.double() is net and {p.dtype for p in net.parameters()} == {gs.float64}
    net.float()
    net.heads.append(nn.Linear(16, 1))
    assert len(net.heads) == 3 and "heads.2.bias" in dict(net.named_parameters())
