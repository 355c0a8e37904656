"""oracle_scenario.py: the Python oracle's program (test_oracle.py): clones, detaches, views,
in-place writes through aliases, scopes, a module's parameters, backward, an optimizer step,
.double() and unary ops in place, each on its own line so every call is probed."""
import gradscope as gs
import gradscope.nn as nn

x = gs.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
h = x * 2.0
c = h.clone()
d = h.detach()
row = d[1]
col = d[:, 2]
c += 100.0
d *= 10.0
row.fill_(7.0)
col.mul_(0.5)
t = d.t()
with gs.dispose_scope("step"):
    y = (c * c).sum()
    y.backward()
    inner = x.grad * 1.0
    kept = inner.move_to_outer()
layer = nn.Linear(3, 2)
opt = gs.optim.SGD(layer.parameters(), lr=0.1)
with gs.dispose_scope("train"):
    out = layer(h.detach())
    loss = (out * out).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
layer.double()
s = (h * 1.0).detach().requires_grad_()
u = s * 1.0
u.t().sin_()
u.exp_()
u.sum().backward()
del x, h, c, d, row, col, t, y, inner, kept, layer, opt, out, loss, s, u
