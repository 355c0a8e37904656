# Double backward (create_graph=True): the second derivative of x**3, the third of sin, a
# differentiable .grad from Tensor.backward, a Hessian-vector product of a small MLP, and a
# WGAN-GP style gradient-penalty step with an optimizer.
import torch


def r(t):
    return [round(v, 4) for v in t.reshape(-1).tolist()]


x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = (x ** 3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print("dy/dx", r(g), g.requires_grad)
(g2,) = torch.autograd.grad(g.sum(), x)
print("d2y/dx2", r(g2))

s = torch.sin(x).sum()
(d1,) = torch.autograd.grad(s, x, create_graph=True)
(d2,) = torch.autograd.grad(d1.sum(), x, create_graph=True)
(d3,) = torch.autograd.grad(d2.sum(), x)
print("sin'", r(d1))
print("sin''", r(d2))
print("sin'''", r(d3))

# Tensor.backward(create_graph=True): x.grad has a graph of its own.
z = torch.tensor([1.0, 2.0], requires_grad=True)
(z.exp() * z).sum().backward(create_graph=True)
print("z.grad", r(z.grad), z.grad.grad_fn is not None)
(gz,) = torch.autograd.grad(z.grad.sum(), z)
print("d/dz sum(z.grad)", r(gz))


def fill(module, scale):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            values = torch.linspace(-scale, scale, n) * (1.0 if i % 2 == 0 else -0.5)
            p.copy_(values.reshape(p.shape))


# Hessian-vector product of an MLP's loss with respect to its parameters.
mlp = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
fill(mlp, 0.7)
inputs = torch.linspace(-1.0, 1.0, 15).reshape(5, 3)
targets = torch.linspace(0.5, -0.5, 10).reshape(5, 2)
params = list(mlp.parameters())
loss = ((mlp(inputs) - targets) ** 2).mean()
grads = torch.autograd.grad(loss, params, create_graph=True)
vs = [torch.linspace(0.1, 1.0, p.numel()).reshape(p.shape) for p in params]
dot = sum((gp * v).sum() for gp, v in zip(grads, vs))
hv = torch.autograd.grad(dot, params)
print("loss", round(loss.item(), 6))
for i, h in enumerate(hv):
    print("Hv", i, r(h))

# WGAN-GP: the critic's loss includes the penalty (|grad of the critic at interpolates| - 1)^2.
critic = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(),
                             torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
fill(critic, 0.6)
opt = torch.optim.Adam(critic.parameters(), lr=0.01, betas=(0.5, 0.9))
real = torch.linspace(-1.0, 2.0, 12).reshape(4, 3)
fake = torch.linspace(1.5, -0.5, 12).reshape(4, 3)
alpha = torch.tensor([[0.1], [0.4], [0.7], [0.9]])
for step in range(3):
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    (grad_in,) = torch.autograd.grad(out.sum(), interp, create_graph=True)
    penalty = ((grad_in.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, "loss", round(loss.item(), 5), "penalty", round(penalty.item(), 5))
print("critic weight", r(critic[0].weight)[:6])
print("last layer", r(critic[4].weight), r(critic[4].bias))
