# torch.distributions in training code: a policy-gradient step on the digits (Categorical over
# a network's logits: log_prob of the taken actions weighted by an advantage, minus an entropy
# bonus), a small VAE-style encoder whose Normal posterior is pulled towards Normal(0, 1) by
# the analytic KL, Bernoulli pixels' log-likelihood, and samples checked by their statistics
# (gradscope's generator is not torch's, so samples are compared by mean and spread only).
import gzip
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Categorical, Independent, Normal, kl_divergence

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "data", "digits.csv.gz")
rows = np.loadtxt(gzip.open(path, "rt"), delimiter=",", dtype=np.float32)[:400]
x = torch.tensor(rows[:, :64] / 16.0)
y = torch.tensor(rows[:, 64].astype(np.int64))


def fixed(module, seed):
    g = np.random.RandomState(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(g.uniform(-0.2, 0.2, tuple(p.shape)).astype(np.float32)))
    return module


# Policy gradient: the "actions" are the labels, the advantage rewards the right class.
policy = fixed(nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10)), 1)
opt = torch.optim.Adam(policy.parameters(), lr=0.02)
for step in range(20):
    dist = Categorical(logits=policy(x))
    advantage = (dist.probs.argmax(1) == y).float() * 2 - 1
    loss = -(dist.log_prob(y) * advantage).mean() - 0.01 * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(f"policy step {step} loss {loss.item():.5f} entropy {dist.entropy().mean().item():.5f}")
print("batch", dist.batch_shape, "event", dist.event_shape, "support", dist.support)

# An encoder to a diagonal Normal posterior, decoded to Bernoulli pixels; the posterior mean
# is decoded (not a sample) so the numbers are the same in both libraries.
enc = fixed(nn.Linear(64, 8), 2)
dec = fixed(nn.Linear(4, 64), 3)
opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=0.01)
prior = Normal(torch.zeros(4), torch.ones(4))
binary = (x > 0.5).float()
for step in range(25):
    h = enc(x)
    q = Normal(h[:, :4], nn.functional.softplus(h[:, 4:]) + 1e-3)
    pixels = Independent(Bernoulli(logits=dec(q.mean)), 1)
    nll = -pixels.log_prob(binary).mean()
    kl = kl_divergence(q, prior).sum(1).mean()
    loss = nll + kl
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(f"vae step {step} nll {nll.item():.5f} kl {kl.item():.5f}")
print("posterior", q, "pixels", pixels.batch_shape, pixels.event_shape)

# rsample carries the gradient to the parameters; samples have the right statistics.
torch.manual_seed(0)
loc = torch.tensor([1.0, -2.0], requires_grad=True)
scale = torch.tensor([0.5, 2.0], requires_grad=True)
z = Normal(loc, scale).rsample((20000,))
z.mean(0).sum().backward()
print("rsample grads", [round(v, 4) for v in loc.grad.tolist()],
      [round(v, 1) for v in scale.grad.abs().tolist()])
print("normal stats ok", bool(((z.mean(0) - loc).abs() < 0.1).all()),
      bool(((z.std(0) - scale).abs() < 0.1).all()))
c = Categorical(probs=torch.tensor([0.1, 0.6, 0.3])).sample((30000,))
counts = torch.stack([(c == k).float().mean() for k in range(3)])
print("categorical stats ok", bool(((counts - torch.tensor([0.1, 0.6, 0.3])).abs() < 0.02).all()))
b = Bernoulli(probs=torch.full((10000,), 0.25)).sample()
print("bernoulli stats ok", abs(b.mean().item() - 0.25) < 0.02, sorted(set(b.tolist())))
try:
    Normal(torch.zeros(2), torch.tensor([1.0, -1.0]))
except ValueError as e:
    print("refused:", str(e).splitlines()[0])
