"""RMSprop and Adagrad, step for step as torch.optim's (1.13, the single-tensor path), written as
PyTorch writes them: Optimizer subclasses whose step() updates each parameter with tensor ops.
Their state (square averages, sums, momentum buffers) is tensors in `state`, so it saves with
state_dict() and the engine records every op of a step in the event log."""
from gradscope import _gradscope
from gradscope.autograd import enable_grad, no_grad
from gradscope.optim.optimizer import Optimizer, _refuse


def _check(what, value):
    """torch's check of a hyper-parameter, in its words ("Invalid epsilon value: -1")."""
    if not value >= 0.0:
        raise ValueError(f"Invalid {what}: {value}")


def _closure_loss(closure):
    if closure is None:
        return None
    with enable_grad():
        return closure()


class RMSprop(Optimizer):
    """RMSprop: the gradient divided by a running root mean square of past gradients
    (optionally centered, with momentum and weight decay), as torch.optim.RMSprop."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        _refuse(self, differentiable=differentiable)
        for what, value in (("learning rate", lr), ("epsilon value", eps),
                            ("momentum value", momentum), ("weight_decay value", weight_decay),
                            ("alpha value", alpha)):
            _check(what, value)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns closure()'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            alpha, eps, lr = group["alpha"], group["eps"], group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = _gradscope.tensor(0.0)
                    state["square_avg"] = _gradscope.zeros_like(p)
                    if group["momentum"] > 0:
                        state["momentum_buffer"] = _gradscope.zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = _gradscope.zeros_like(p)
                state["step"] += 1
                if group["weight_decay"] != 0:
                    grad = grad + p * group["weight_decay"]
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
                if group["centered"]:
                    grad_avg = state["grad_avg"]
                    grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
                    avg = (square_avg - grad_avg * grad_avg).sqrt() + eps
                else:
                    avg = square_avg.sqrt() + eps
                if group["momentum"] > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(group["momentum"]).add_(grad / avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.add_(grad / avg, alpha=-lr)
        return loss


class Adagrad(Optimizer):
    """Adagrad: each element's step scaled by the root of its summed squared gradients, the
    rate decaying with lr_decay, as torch.optim.Adagrad."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False):
        for what, value in (("learning rate", lr), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value),
                            ("epsilon value", eps)):
            _check(what, value)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize))
        for group in self.param_groups:  # torch makes the state at construction
            for p in group["params"]:
                self.state[p]["step"] = _gradscope.tensor(0.0)
                self.state[p]["sum"] = _gradscope.full_like(
                    p, group["initial_accumulator_value"])

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns closure()'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                state["step"] += 1
                step = state["step"].item()
                if group["weight_decay"] != 0:
                    grad = grad + p * group["weight_decay"]
                clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                state["sum"].add_(grad * grad)
                std = state["sum"].sqrt() + group["eps"]
                p.add_(grad / std, alpha=-clr)
        return loss
