# Least squares and a Gaussian fitted by maximum likelihood, as a script writes them with
# torch.linalg and torch.distributions: a polynomial fit by linalg.lstsq (its named tuple,
# gradients through it), the same fit through QR and through the pseudo-inverse, SVD-based
# rank and conditioning, cholesky_solve on the normal equations, then a 2-D
# MultivariateNormal whose mean and Cholesky factor are fitted by Adam on the negative
# log-likelihood, its KL divergence to the truth, and a Binomial's log-likelihood. Signs of
# singular vectors and Q columns are LAPACK's, so only sign-free quantities are printed.
import torch

torch.manual_seed(0)
x = torch.linspace(-1.0, 1.0, 20, dtype=torch.float64)
y = 0.5 - 1.5 * x + 2.0 * x ** 3 + 0.05 * torch.sin(9.0 * x)
A = torch.stack([torch.ones_like(x), x, x * x, x ** 3], dim=1)

fit = torch.linalg.lstsq(A, y.unsqueeze(1))
print("lstsq", [round(c, 6) for c in fit.solution.squeeze(1).tolist()], "rank", fit.rank.item(),
      "residuals", tuple(fit.residuals.shape), "values", tuple(fit.singular_values.shape))
Q, R = torch.linalg.qr(A)
via_qr = torch.linalg.solve(R, Q.T @ y)
print("qr", [round(c, 6) for c in via_qr.tolist()], [round(abs(d), 6) for d in R.diagonal().tolist()])
print("pinv", [round(c, 6) for c in (torch.linalg.pinv(A) @ y).tolist()])
S = torch.linalg.svd(A, full_matrices=False).S
print("svd", [round(s, 6) for s in S.tolist()], "cond", round((S[0] / S[-1]).item(), 4),
      "rank", torch.linalg.matrix_rank(A).item())
L = torch.linalg.cholesky(A.T @ A)
print("cholesky_solve", [round(c, 6) for c in torch.cholesky_solve((A.T @ y).unsqueeze(1), L).squeeze(1).tolist()])

# the gradient of the fitted curve's value at x = 0.5 with respect to the data
target = y.clone().requires_grad_()
coef = torch.linalg.lstsq(A, target.unsqueeze(1)).solution.squeeze(1)
value = coef @ torch.tensor([1.0, 0.5, 0.25, 0.125], dtype=torch.float64)
value.backward()
print("value", round(value.item(), 6), "grad_fn", coef.grad_fn.next_functions[0][0].name(),
      "grad", [round(g, 6) for g in target.grad[:5].tolist()])

# a 2-D Gaussian by maximum likelihood
true_loc = torch.tensor([1.0, -2.0], dtype=torch.float64)
true_tril = torch.tensor([[1.0, 0.0], [0.6, 0.5]], dtype=torch.float64)
noise = torch.linspace(-1.5, 1.5, 40, dtype=torch.float64)
data = true_loc + torch.stack([noise, torch.cos(3.0 * noise)], dim=1) @ true_tril.T
loc = torch.zeros(2, dtype=torch.float64, requires_grad=True)
raw = torch.zeros(2, 2, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.Adam([loc, raw], lr=0.1)


def model():
    tril = torch.tril(raw, -1) + torch.diag_embed(torch.exp(torch.diagonal(raw)))
    return torch.distributions.MultivariateNormal(loc, scale_tril=tril)


for step in range(40):
    optimizer.zero_grad()
    nll = -model().log_prob(data).mean()
    nll.backward()
    optimizer.step()
    if step % 10 == 0:
        print("mvn step", step, round(nll.item(), 6), [round(g, 6) for g in loc.grad.tolist()])
fitted = model()
truth = torch.distributions.MultivariateNormal(true_loc, covariance_matrix=true_tril @ true_tril.T)
print("mvn fitted", [round(v, 5) for v in fitted.mean.tolist()],
      [round(v, 5) for v in fitted.covariance_matrix.flatten().tolist()],
      "entropy", round(fitted.entropy().item(), 5))
print("kl", round(torch.distributions.kl_divergence(fitted, truth).item(), 5),
      "event", tuple(fitted.event_shape), "batch", tuple(fitted.batch_shape))
print("precision", [round(v, 5) for v in truth.precision_matrix.flatten().tolist()])

counts = torch.tensor([3.0, 7.0, 5.0], dtype=torch.float64)
p = torch.tensor([0.5, 0.5, 0.5], dtype=torch.float64, requires_grad=True)
binomial = torch.distributions.Binomial(10, probs=p)
log_likelihood = binomial.log_prob(counts).sum()
log_likelihood.backward()
print("binomial", round(log_likelihood.item(), 6), [round(g, 6) for g in p.grad.tolist()],
      "mean", binomial.mean.tolist(), "support", binomial.enumerate_support(expand=False).flatten().tolist())
