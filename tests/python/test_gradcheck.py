"""torch.autograd.gradcheck/gradgradcheck on gradscope, against torch 1.13: the same
verdicts on correct and deliberately wrong backwards (a Function whose backward is off by a
factor, or right once but not differentiable again), the same error type. meson registers
this file only where torch is installed."""
import numpy as np
import pytest
import torch

import gradscope as gs


def wrong_square(mod):
    class WrongSquare(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * g  # should be 2 x g

    return WrongSquare


def test_gradcheck_verdicts_match_torchs():
    a = np.array([[0.3, -1.2, 0.5], [1.5, 0.7, -0.4]])
    b = np.array([0.2, -0.7, 1.1])
    for fn in (lambda m, x, y: (x * y).sin().sum(1), lambda m, x, y: x @ y.exp(),
               lambda m, x, y: (x.tanh(), y.sigmoid() * 2), lambda m, x, y: m.nn.functional.softmax(x + y, 1)):
        args_g = (gs.tensor(a, requires_grad=True), gs.tensor(b, requires_grad=True))
        args_t = (torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True))
        assert gs.autograd.gradcheck(lambda x, y: fn(gs, x, y), args_g) is True
        assert torch.autograd.gradcheck(lambda x, y: fn(torch, x, y), args_t) is True
        assert gs.autograd.gradgradcheck(lambda x, y: fn(gs, x, y), args_g) is True
    bad_g, bad_t = wrong_square(gs), wrong_square(torch)
    x_g, x_t = gs.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gs.autograd.gradcheck(bad_g.apply, (x_g,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        torch.autograd.gradcheck(bad_t.apply, (x_t,))
    assert gs.autograd.gradcheck(bad_g.apply, (x_g,), raise_exception=False) is False
    assert torch.autograd.gradcheck(bad_t.apply, (x_t,), raise_exception=False) is False
    assert issubclass(gs.autograd.GradcheckError, RuntimeError)


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class FirstRightSecondWrong(gs.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x.detach() ** 2 * g  # right value, but detached: no second derivative

    x = gs.tensor([0.4, -1.3], dtype=gs.float64, requires_grad=True)
    assert gs.autograd.gradcheck(FirstRightSecondWrong.apply, (x,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gs.autograd.gradgradcheck(FirstRightSecondWrong.apply, (x,))


def test_gradcheck_warns_about_single_precision_and_needs_an_input():
    with pytest.warns(UserWarning, match="is not a double precision"):
        gs.autograd.gradcheck(lambda x: x * 2, (gs.ones(2, requires_grad=True),), eps=1e-2, atol=1e-2)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gs.autograd.gradcheck(lambda x: x * 2, (gs.ones(2, dtype=gs.float64),))
