"""Small Tensor and torch names real scripts use, as compositions of the engine's ops (their
gradients are the ops'; grad_fn names are those of the ops composed): Tensor.nbytes,
share_memory_/is_shared (the engine's memfd shared memory), pin_memory/is_pinned (torch 1.13
without CUDA), addcmul/addcdiv and their in-place forms, movedim/moveaxis, swapaxes/swapdims,
nan_to_num, sum_to_size, fill_diagonal_, and the sampling functions normal, bernoulli,
multinomial, random_ and exponential_ (drawn from gradscope's generator: seeded runs repeat,
but the numbers are not torch's). Put on the C type (_extend_type), so every tensor has them."""
import builtins
import math

import numpy as np

from gradscope import _gradscope as _c
from gradscope._draw_order import in_memory_order as _in_memory_order

Tensor = _c.Tensor
_FLOAT_MAX = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}


def _rand_like(t):
    from gradscope.creation import rand_like  # creation.py is imported before this module
    return rand_like(t)


def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


def nbytes(self):
    """Bytes the elements take: numel() * element_size(), as torch's Tensor.nbytes."""
    return self.numel() * self.element_size()


def share_memory_(self):
    """Moves the storage into shared memory (a memfd mapping other processes can map), as
    torch's; returns self. Already shared: nothing to do."""
    return _c._share_memory(self)


def is_shared(self):
    """Whether the storage lives in shared memory (share_memory_, or received from another
    process)."""
    return _c._is_shared(self)


def pin_memory(self, device=None):
    """Refused as torch 1.13 built without CUDA refuses it: pinned memory is for copies to a
    GPU, and gradscope computes on the CPU only."""
    raise NotImplementedError("pin_memory(): pinned memory is for copies to a GPU; gradscope "
                              "computes on the CPU only (drop pin_memory, or "
                              "pin_memory=False in a DataLoader)")


def is_pinned(self, device=None):
    """False: gradscope has no pinned memory."""
    return False


def addcmul(self, tensor1, tensor2, *, value=1):
    """self + value * tensor1 * tensor2 (torch.addcmul), value applied to tensor1 first as
    torch's kernel does."""
    return self + tensor1 * value * tensor2 if value != 1 else self + tensor1 * tensor2


def addcmul_(self, tensor1, tensor2, *, value=1):
    """In place: self += value * tensor1 * tensor2; returns self."""
    return self.add_(tensor1 * value * tensor2 if value != 1 else tensor1 * tensor2)


def addcdiv(self, tensor1, tensor2, *, value=1):
    """self + value * tensor1 / tensor2 (torch.addcdiv)."""
    return self + (tensor1 * value if value != 1 else tensor1) / tensor2


def addcdiv_(self, tensor1, tensor2, *, value=1):
    """In place: self += value * tensor1 / tensor2; returns self."""
    return self.add_((tensor1 * value if value != 1 else tensor1) / tensor2)


def movedim(self, source, destination):
    """The dimensions in source moved to the positions in destination, the others keeping
    their order (a view, torch.movedim)."""
    nd = self.dim()
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")

    def wrap(d):
        if not -max(nd, 1) <= d < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got {d})")
        return d % max(nd, 1)
    src, dst = [wrap(d) for d in src], [wrap(d) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in `source` or `destination`")
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return self.permute(*order) if nd else self


def swapaxes(self, axis0, axis1):
    """torch.swapaxes: transpose(axis0, axis1)."""
    return self.transpose(axis0, axis1)


def swapdims(self, dim0, dim1):
    """torch.swapdims: transpose(dim0, dim1)."""
    return self.transpose(dim0, dim1)


def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    """NaN replaced by nan, +inf by posinf and -inf by neginf (the dtype's largest and lowest
    finite values by default), as torch.nan_to_num; integers are returned unchanged."""
    name = _dtype_name(self.dtype)
    if name not in _FLOAT_MAX:
        return self.clone()
    big = _FLOAT_MAX[name]
    out = _c.where(self != self, float(nan), self)
    out = _c.where(out == math.inf, big if posinf is None else float(posinf), out)
    return _c.where(out == -math.inf, -big if neginf is None else float(neginf), out)


def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """In place: nan_to_num written back into self; returns self."""
    return self.copy_(nan_to_num(self, nan, posinf, neginf))


def sum_to_size(self, *size):
    """self summed down to size, which self must broadcast from (the gradient's reduction of
    a broadcast, torch.Tensor.sum_to_size)."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s in (1, n) for s, n in zip(size, shape[lead:]))
    if not ok:
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    out = self
    if lead:
        out = out.sum(tuple(range(lead)))
    dims = tuple(i for i, (s, n) in enumerate(zip(size, shape[lead:])) if s == 1 and n != 1)
    if dims:
        out = out.sum(dims, keepdim=True)
    return out


def fill_diagonal_(self, fill_value, wrap=False):
    """The main diagonal set to fill_value in place (all dimensions equal beyond 2-D; a tall
    matrix's diagonal restarts every cols + 1 rows with wrap=True), as torch's; returns self."""
    nd = self.dim()
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(self.shape)
    if nd > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if nd > 2:
        for i in range(shape[0]):
            self[(i,) * nd] = fill_value
        return self
    rows, cols = shape
    step = cols + 1
    limit = rows * cols if wrap else builtins.min(rows, cols) * cols
    for flat in range(0, limit, step):
        self[flat // cols, flat % cols] = fill_value
    return self


def bernoulli(input, p=None, *, generator=None):
    """1 with probability input (or p) and 0 otherwise, in input's dtype (torch.bernoulli)."""
    if p is not None:  # a number: torch compares it with 53-bit double uniforms
        return (_c.rand(*input.shape, dtype=_c.float64) < float(p)).to(input.dtype)
    return (_rand_like(input) < input).to(input.dtype)


def bernoulli_(self, p=0.5, *, generator=None):
    """In place: each element 1 with probability p (a number or a tensor), else 0."""
    # torch draws uniforms in p's dtype (a number: float64) and compares them with p
    if _c.is_tensor(p):
        mask = _c.rand(*self.shape, dtype=p.dtype) < p
    else:
        mask = _in_memory_order(self, lambda shape: _c.rand(*shape, dtype=_c.float64)) < float(p)
    with _c.no_grad():
        return self.copy_(mask.to(self.dtype))


def random_(self, *args, generator=None):
    """In place: integers drawn uniformly from [from, to - 1] (random_(to): [0, to - 1];
    random_(): [0, 2**24] for float32, [0, 2**53] for float64, the dtype's range for
    integers), as torch's."""
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        low, high = 0, args[0]
    elif not args:
        name = _dtype_name(self.dtype)
        low = 0
        if name == "int64":  # torch's 64 bits mod 2**63
            draw = _in_memory_order(self, lambda shape: _c._random_int64(self.numel()).reshape(shape))
            with _c.no_grad():
                return self.copy_(draw)
        high = {"float32": 2 ** 24 + 1, "float64": 2 ** 53 + 1, "int32": 2 ** 31,
                "int16": 2 ** 15, "int8": 2 ** 7, "uint8": 2 ** 8, "bool": 2}[name]
    else:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    if high is None:
        raise NotImplementedError("random_(from, None): gradscope needs an upper bound")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    draw = _in_memory_order(self, lambda shape: _c.randint(int(low), int(high), shape))
    with _c.no_grad():
        return self.copy_(draw.to(self.dtype))


def exponential_(self, lambd=1.0, *, generator=None):
    """In place: draws from the exponential distribution of rate lambd, -log(1 - U) / lambd
    with U a float64 uniform, as torch's CPU kernel."""
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    with _c.no_grad():
        u = _in_memory_order(self, lambda shape: _c.rand(*shape, dtype=_c.float64))
        return self.copy_(((1.0 - u).log() * (-1.0 / lambd)).to(self.dtype))


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False):
    """torch.normal: mean + std * N(0, 1), with mean and std tensors (broadcast together) or
    numbers and a size."""
    if _c.is_tensor(mean) or _c.is_tensor(std):
        like = mean if _c.is_tensor(mean) else std
        shape = tuple((mean + std).shape) if _c.is_tensor(mean) and _c.is_tensor(std) \
            else tuple(like.shape)
        out = _c.randn(*shape, dtype=like.dtype) * std + mean
        return out.detach()
    if size is None:
        raise TypeError("normal(): with numbers for mean and std, give a size")
    size = tuple(size)
    out = _c.randn(*size, dtype=dtype) * float(std) + float(mean)
    return out.requires_grad_(requires_grad) if requires_grad else out


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the categories weighted by input's rows (1-D: one row), int64, as
    torch.multinomial; without replacement each category is drawn at most once."""
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    rows = input.reshape(1, -1) if input.dim() == 1 else input
    n_rows, n_cat = rows.shape
    if not isinstance(num_samples, int) or num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample {num_samples!r} samples: expected a "
                           "positive int")
    if num_samples > 1 << 24:
        raise RuntimeError(f"multinomial: gradscope draws at most 2**24 samples per row, got "
                           f"{num_samples}")
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    weights = rows.detach().double().tolist()
    out = []
    for w in weights:
        if builtins.any(v < 0 or v != v or v == math.inf for v in w) or builtins.sum(w) <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)"
                               if builtins.sum(w) <= 0 else
                               "probability tensor contains either `inf`, `nan` or element < 0")
        draws = _c.rand(num_samples, dtype=_c.float64).numpy()
        if replacement:  # one search per draw in the cumulative weights
            cum = np.cumsum(w)
            picks = np.searchsorted(cum, draws * cum[-1], side="right")
            out.append([int(k) if w[builtins.min(k, n_cat - 1)] > 0 else
                        builtins.max(j for j, v in enumerate(w) if v > 0)
                        for k in np.minimum(picks, n_cat - 1)])
            continue
        w = list(w)
        picks = []
        for u in draws.tolist():
            total = builtins.sum(w)
            target, acc, pick = u * total, 0.0, None
            for k, v in enumerate(w):
                acc += v
                if v > 0 and target < acc:
                    pick = k
                    break
            if pick is None:
                pick = builtins.max(k for k, v in enumerate(w) if v > 0)
            picks.append(pick)
            if not replacement:
                w[pick] = 0.0
        out.append(picks)
    result = _c.tensor(out, dtype=_c.int64)
    return result.reshape(num_samples) if input.dim() == 1 else result


for _name, _value in [("addcmul", addcmul), ("addcmul_", addcmul_), ("addcdiv", addcdiv),
                      ("addcdiv_", addcdiv_), ("movedim", movedim), ("moveaxis", movedim),
                      ("swapaxes", swapaxes), ("swapdims", swapdims),
                      ("nan_to_num", nan_to_num), ("nan_to_num_", nan_to_num_),
                      ("sum_to_size", sum_to_size), ("fill_diagonal_", fill_diagonal_),
                      ("share_memory_", share_memory_), ("is_shared", is_shared),
                      ("pin_memory", pin_memory), ("is_pinned", is_pinned),
                      ("bernoulli", bernoulli), ("bernoulli_", bernoulli_),
                      ("multinomial", multinomial), ("random_", random_),
                      ("exponential_", exponential_), ("nbytes", property(nbytes))]:
    _c._extend_type(Tensor, _name, _value)
del _name, _value


# The torch.NAME forms, with torch's parameter names.
def addcmul_function(input, tensor1, tensor2, *, value=1):
    """torch.addcmul: input + value * tensor1 * tensor2."""
    return addcmul(input, tensor1, tensor2, value=value)


def addcdiv_function(input, tensor1, tensor2, *, value=1):
    """torch.addcdiv: input + value * tensor1 / tensor2."""
    return addcdiv(input, tensor1, tensor2, value=value)


def movedim_function(input, source, destination):
    """torch.movedim (and torch.moveaxis): input's dimensions in source moved to destination."""
    return movedim(input, source, destination)


def swapaxes_function(input, axis0, axis1):
    """torch.swapaxes: input.transpose(axis0, axis1)."""
    return input.transpose(axis0, axis1)


def swapdims_function(input, dim0, dim1):
    """torch.swapdims: input.transpose(dim0, dim1)."""
    return input.transpose(dim0, dim1)


def nan_to_num_function(input, nan=0.0, posinf=None, neginf=None):
    """torch.nan_to_num: NaN and infinities of input replaced by finite values."""
    return nan_to_num(input, nan, posinf, neginf)


def polygamma(n, input):
    """torch.polygamma(n, input): the n-th derivative of digamma at each element of input."""
    return input.polygamma(n)
