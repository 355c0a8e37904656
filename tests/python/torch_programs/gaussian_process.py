# Linear algebra a script calls through torch.linalg: ridge regression by the normal equations
# (linalg.solve), a Gaussian-process regression whose kernel lengthscale and noise are fitted by
# Adam on the negative log marginal likelihood (linalg.solve and linalg.slogdet, gradients
# through both), a whitening step with linalg.inv, linalg.det, the covariance's cholesky,
# eigvalsh, svdvals and a ZCA whitening through eigh, and the norms (vector_norm, matrix_norm, norm, 'nuc' and 2), with
# their grad_fn names and the error a singular matrix raises.
import math

import torch

torch.manual_seed(0)
x = torch.linspace(-2.0, 2.0, 12, dtype=torch.float64)
y = torch.sin(1.5 * x) + 0.1 * torch.cos(7.0 * x)

# ridge regression on the features (1, x, x^2, x^3)
features = torch.stack([torch.ones_like(x), x, x * x, x * x * x], dim=1)
gram = features.T @ features + 0.1 * torch.eye(4, dtype=torch.float64)
weights = torch.linalg.solve(gram, features.T @ y)
print("ridge", [round(w, 6) for w in weights.tolist()])
print("ridge residual", round(torch.linalg.vector_norm(features @ weights - y).item(), 6))

# Gaussian process: fit log lengthscale and log noise
log_length = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
log_noise = torch.tensor(-2.0, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.Adam([log_length, log_noise], lr=0.05)


def kernel(a, b):
    d = a.unsqueeze(1) - b.unsqueeze(0)
    return torch.exp(-0.5 * d * d / torch.exp(2 * log_length))


def negative_log_likelihood():
    k = kernel(x, x) + torch.exp(2 * log_noise) * torch.eye(12, dtype=torch.float64)
    alpha = torch.linalg.solve(k, y)
    sign, logdet = torch.linalg.slogdet(k)
    return 0.5 * (y * alpha).sum() + 0.5 * logdet + 6.0 * math.log(2 * math.pi), alpha


for step in range(30):
    optimizer.zero_grad()
    loss, _ = negative_log_likelihood()
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print("gp step", step, round(loss.item(), 6), round(log_length.grad.item(), 6),
              round(log_noise.grad.item(), 6))
loss, alpha = negative_log_likelihood()
print("gp fitted", round(loss.item(), 6), round(log_length.item(), 6), round(log_noise.item(), 6))
print("gp grad_fn", alpha.grad_fn.name())
test_x = torch.tensor([-1.5, 0.25, 1.0], dtype=torch.float64)
with torch.no_grad():
    mean = kernel(test_x, x) @ alpha
print("gp mean", [round(m, 5) for m in mean.tolist()])

# whitening: samples with a known covariance, mapped to identity covariance
mix = torch.tensor([[2.0, 0.5, 0.0], [0.3, 1.0, -0.4], [0.0, 0.2, 0.7]], dtype=torch.float64,
                   requires_grad=True)
samples = torch.linspace(-1.0, 1.0, 30, dtype=torch.float64).reshape(10, 3).sin() @ mix.T
cov = samples.T @ samples / 10 + 0.01 * torch.eye(3, dtype=torch.float64)
inverse = torch.linalg.inv(cov)
white = samples @ inverse
print("inv grad_fn", inverse.grad_fn.name())
print("det", round(torch.linalg.det(cov).item(), 8), torch.linalg.det(cov).grad_fn.name())
batch = torch.stack([cov, 2 * cov, -cov])
print("batched det", [round(d, 8) for d in torch.linalg.det(batch).tolist()])
sign, logabs = torch.linalg.slogdet(batch)
print("batched slogdet", sign.tolist(), [round(v, 6) for v in logabs.tolist()])
score = white.pow(2).sum() + torch.linalg.det(cov) + torch.linalg.matrix_norm(inverse, 1)
score.backward()
print("mix.grad", [round(g, 6) for g in mix.grad.flatten().tolist()])

# the same covariance (a new graph) through its factorisations: Cholesky, eigenvalues,
# singular values
samples = torch.linspace(-1.0, 1.0, 30, dtype=torch.float64).reshape(10, 3).sin() @ mix.T
cov = samples.T @ samples / 10 + 0.01 * torch.eye(3, dtype=torch.float64)
chol = torch.linalg.cholesky(cov)
print("cholesky", [round(v, 8) for v in chol.flatten().tolist()], chol.grad_fn.name())
eig = torch.linalg.eigvalsh(cov)
print("eigvalsh", [round(v, 8) for v in eig.tolist()], eig.grad_fn.name())
print("svdvals", [round(v, 8) for v in torch.linalg.svdvals(mix).tolist()])
# ZCA whitening through eigh: V diag(w^-1/2) V^T does not depend on the eigenvectors' signs
w, v = torch.linalg.eigh(cov)
zca = v @ torch.diag(w.rsqrt()) @ v.T
print("zca", [round(z, 8) for z in zca.flatten().tolist()], v.grad_fn.name())
mix.grad = None
spread = (samples @ zca).pow(2).mean() + zca.trace()
spread.backward()
print("mix.grad by zca", [round(g, 6) for g in mix.grad.flatten().tolist()])
samples = torch.linspace(-1.0, 1.0, 30, dtype=torch.float64).reshape(10, 3).sin() @ mix.T
cov = samples.T @ samples / 10 + 0.01 * torch.eye(3, dtype=torch.float64)
chol = torch.linalg.cholesky(cov)
eig = torch.linalg.eigvalsh(cov)
mix.grad = None
spread = chol.sum() + eig.max() + torch.linalg.matrix_norm(mix, "nuc") + torch.linalg.norm(mix, 2)
spread.backward()
print("mix.grad by factorisations", [round(g, 6) for g in mix.grad.flatten().tolist()])

# norms
m = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], dtype=torch.float64)
print("vector_norm", round(torch.linalg.vector_norm(m).item(), 10), torch.linalg.vector_norm(m, 1, dim=1).tolist(),
      torch.linalg.vector_norm(m, float("inf")).item())
print("matrix_norm", round(torch.linalg.matrix_norm(m).item(), 10),
      torch.linalg.matrix_norm(m, 1).item(), torch.linalg.matrix_norm(m, float("-inf")).item())
print("norm", round(torch.linalg.norm(m).item(), 10), torch.linalg.norm(m, float("inf")).item(),
      round(torch.linalg.norm(m[0], 3).item(), 10), torch.linalg.norm(m, 1, dim=0).tolist())

try:
    torch.linalg.solve(torch.tensor([[1.0, 2.0], [2.0, 4.0]]), torch.ones(2))
except torch.linalg.LinAlgError:
    print("singular: LinAlgError")
