"""gradscope.random_draws: generator= on every function and method that draws random
numbers, as torch's: given a Generator, the draw comes from that generator's state (swapped in
for the call and advanced by it, gradscope.surface.Generator._drawing), so seeded generators
give reproducible draws independent of the default one, torch's numbers for the same seed.
Put on the C type and the package by
gradscope/__init__.py."""
import functools
import inspect

from gradscope import _gradscope as _c

Tensor = _c.Tensor


def drawing_from(fn):
    """fn with a keyword generator=: None draws from the default generator as fn does."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None

    @functools.wraps(fn)
    def wrapper(*args, generator=None, **kwargs):
        if generator is None:
            return fn(*args, **kwargs)
        if not hasattr(generator, "_drawing"):
            raise TypeError(f"{fn.__name__}(): argument 'generator' must be torch.Generator, "
                            f"not {type(generator).__name__}")
        with generator._drawing():
            return fn(*args, **kwargs)

    if sig is not None and "generator" not in sig.parameters:
        params = list(sig.parameters.values())
        at = next((i for i, p in enumerate(params) if p.kind is p.KEYWORD_ONLY), len(params))
        params.insert(at, inspect.Parameter("generator", inspect.Parameter.KEYWORD_ONLY,
                                            default=None))
        wrapper.__signature__ = sig.replace(parameters=params)
    return wrapper


_METHODS = ("normal_", "uniform_", "random_", "exponential_", "bernoulli_", "bernoulli",
            "multinomial")
for _name in _METHODS:
    _c._extend_type(Tensor, _name, drawing_from(getattr(Tensor, _name)))
del _name
