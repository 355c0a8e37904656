"""grad_fn_names.py: ops whose grad_fn test_autograd_graph.py compares with torch 1.13's:
name() and the names along next_functions. OPS maps a case to a function of the module
(torch or gradscope) returning a tensor; DIFFERENT lists the cases where gradscope records
other ops than torch, each with why (doc/python.md names them), and the test checks both
lists: every other case prints the same as torch, and these still differ (so the list stays
true). `python3 grad_fn_names.py torch|gradscope` prints every case."""
import sys


def _ops(t):
    F = t.nn.functional
    x = t.ones(2, 3, requires_grad=True)
    y = t.ones(3, 2, requires_grad=True)
    v = t.ones(3, requires_grad=True)
    img = t.ones(1, 1, 4, 4, requires_grad=True)
    return {
        "add": lambda: x + x, "add_scalar": lambda: x + 2, "radd": lambda: 2 + x,
        "sub": lambda: x - x, "sub_scalar": lambda: x - 2, "rsub": lambda: 2 - x,
        "mul": lambda: x * x, "mul_scalar": lambda: x * 2, "div": lambda: x / x,
        "div_scalar": lambda: x / 2, "rdiv": lambda: 2 / x, "neg": lambda: -x,
        "pow_scalar": lambda: x ** 2, "pow": lambda: x ** x, "rpow": lambda: 2 ** x,
        "mm": lambda: x @ y, "mv": lambda: x @ v, "dot": lambda: v @ v,
        "bmm": lambda: t.ones(2, 2, 3, requires_grad=True) @ t.ones(2, 3, 2),
        "mm_fn": lambda: t.mm(x, y), "mv_fn": lambda: t.mv(x, v), "dot_fn": lambda: t.dot(v, v),
        "bmm_fn": lambda: t.bmm(t.ones(2, 2, 3, requires_grad=True), t.ones(2, 3, 2)),
        "addmm": lambda: t.addmm(t.ones(2), x, y, beta=0.5), "outer": lambda: t.outer(v, v),
        "matmul_1x2": lambda: v @ y, "matmul_1x3": lambda: v @ t.ones(2, 3, 2),
        "matmul_2x3": lambda: x @ t.ones(2, 3, 2), "matmul_3x2": lambda: t.ones(2, 2, 3) @ y,
        "sum_dim_of_vector": lambda: v.sum(0), "sum_every_dim": lambda: x.sum((0, 1)),
        "mean_dim_of_vector": lambda: v.mean(0),
        "sum": lambda: x.sum(), "sum_dim": lambda: x.sum(0),
        "sum_keepdim": lambda: x.sum(1, keepdim=True), "mean": lambda: x.mean(),
        "mean_dim": lambda: x.mean(0), "relu": lambda: x.relu(), "sigmoid": lambda: x.sigmoid(),
        "tanh": lambda: x.tanh(), "exp": lambda: x.exp(), "log": lambda: x.log(),
        "sqrt": lambda: x.sqrt(), "rsqrt": lambda: x.rsqrt(), "abs": lambda: x.abs(),
        "sin": lambda: x.sin(), "cos": lambda: x.cos(), "tan": lambda: x.tan(),
        "view": lambda: x.view(3, 2), "reshape": lambda: x.reshape(3, 2),
        "reshape_copy": lambda: x.t().reshape(6), "t": lambda: x.t(),
        "transpose": lambda: x.transpose(0, 1), "permute": lambda: x.permute(1, 0),
        "T": lambda: x.T, "slice": lambda: x[:, 1:], "select": lambda: x[0],
        "narrow": lambda: x.narrow(1, 0, 2), "expand": lambda: v.expand(2, 3),
        "squeeze": lambda: x.unsqueeze(0).squeeze(0), "unsqueeze": lambda: x.unsqueeze(0),
        "flatten": lambda: x.flatten(), "contiguous": lambda: x.t().contiguous(),
        "clone": lambda: x.clone(), "cat": lambda: t.cat([x, x]), "stack": lambda: t.stack([x, x]),
        "split": lambda: x.split(1)[0], "chunk": lambda: x.chunk(2, 1)[0],
        "softmax": lambda: x.softmax(1), "log_softmax": lambda: x.log_softmax(1),
        "logsumexp": lambda: x.logsumexp(1), "max": lambda: x.max(),
        "max_dim": lambda: x.max(1)[0], "min": lambda: x.min(), "min_dim": lambda: x.min(1)[0],
        "maximum": lambda: t.maximum(x, x), "minimum": lambda: t.minimum(x, x),
        "clamp": lambda: x.clamp(0, 1), "clamp_min": lambda: x.clamp(min=0),
        "where": lambda: t.where(x > 0, x, x),
        "gather": lambda: x.gather(1, t.zeros(2, 1, dtype=t.long)),
        "index_select": lambda: x.index_select(0, t.tensor([0])),
        "index_list": lambda: x[[0, 1]], "index_mask": lambda: x[x > 0],
        "cumsum": lambda: x.cumsum(1), "double": lambda: x.double(),
        "to": lambda: x.to(t.float64), "masked_fill": lambda: x.masked_fill(x > 0, 1.0),
        "repeat": lambda: x.repeat(2, 1), "std": lambda: x.std(), "var": lambda: x.var(),
        "norm": lambda: x.norm(), "remainder": lambda: x % 2, "gelu": lambda: F.gelu(x),
        "leaky_relu": lambda: F.leaky_relu(x),
        "linear": lambda: F.linear(x, t.ones(4, 3), t.ones(4)),
        "linear_no_bias": lambda: F.linear(x, t.ones(4, 3)),
        "linear_module": lambda: t.nn.Linear(3, 2)(x),
        "mse_loss": lambda: F.mse_loss(x, t.zeros(2, 3)),
        "cross_entropy": lambda: F.cross_entropy(x, t.tensor([0, 1])),
        "embedding": lambda: F.embedding(t.tensor([0, 1]), x),
        "topk": lambda: x.topk(2)[0], "sort": lambda: x.sort()[0],
        "relu_": lambda: (x * 1).relu_(), "add_": lambda: (x * 1).add_(x),
        "mul_": lambda: (x * 1).mul_(2), "fill_": lambda: (x * 1).fill_(2.0),
        "copy_": lambda: (x * 1).copy_(x), "clamp_": lambda: (x * 1).clamp_(0, 1),
        "setitem": lambda: _setitem(x * 1),
        "conv2d": lambda: F.conv2d(img, t.ones(1, 1, 3, 3)),
        "max_pool2d": lambda: F.max_pool2d(img, 2), "avg_pool2d": lambda: F.avg_pool2d(img, 2),
        "conv_transpose2d": lambda: F.conv_transpose2d(img, t.ones(1, 2, 3, 3), t.ones(2)),
        "conv1d": lambda: F.conv1d(img[0], t.ones(2, 4, 3), t.ones(2)),
        "max_pool1d": lambda: F.max_pool1d(img[0], 2), "avg_pool1d": lambda: F.avg_pool1d(img[0], 2),
        "group_norm": lambda: F.group_norm(img, 1), "prelu": lambda: F.prelu(x, t.ones(1)),
        "pad": lambda: F.pad(img, (1, 1)),
        "pad_reflect": lambda: F.pad(img, (1, 1, 1, 1), mode="reflect"),
        "pixel_shuffle": lambda: F.pixel_shuffle(img, 1),
        "interpolate": lambda: F.interpolate(img, scale_factor=2),
        "unfold": lambda: F.unfold(img, 2),
        "interpolate_bicubic": lambda: F.interpolate(img, size=(5, 3), mode="bicubic"),
        "affine_grid": lambda: F.affine_grid(x[None] * 1, (1, 1, 3, 2), align_corners=False),
        "grid_sample": lambda: F.grid_sample(img, F.affine_grid(x[None] * 2,
                                                                (1, 1, 2, 3), align_corners=True),
                                             mode="bicubic", align_corners=True),
    }


def _setitem(z):
    z[0] = 5.0
    return z


# case -> why gradscope's graph differs from torch's there
DIFFERENT = {
    "rdiv": "2 / x is one DivBackward0; torch multiplies by a ReciprocalBackward0",
    "bmm": "a batched matmul is one node named as torch's UnsafeViewBackward0 over its BmmBackward0",
    "matmul_1x2": "vector @ matrix is one node named as torch's SqueezeBackward3 over its MmBackward0",
    "matmul_1x3": "vector @ batch is one node named as torch's UnsafeViewBackward0 over its MvBackward0",
    "matmul_2x3": "matrix @ batch is one node named as torch's CloneBackward0 over its transpose",
    "matmul_3x2": "batch @ matrix is one node named as torch's UnsafeViewBackward0 over its MmBackward0",
    "reshape_copy": "a copying reshape is ReshapeAliasBackward0; torch: UnsafeView over Clone",
    "setitem": "t[0] = 5.0 is a CopySlices of a fill, without torch's scalar edge",
    "group_norm": "torch lists the missing weight and bias as inputs",
}


def describe(t, name):
    """name() of the case's grad_fn and of its next_functions, as a string."""
    fn = _ops(t)[name]().grad_fn
    if fn is None:
        return "None"
    return fn.name() + " " + str([(n.name() if n else None, i) for n, i in fn.next_functions])


if __name__ == "__main__":
    module = __import__(sys.argv[1] if len(sys.argv) > 1 else "gradscope")
    for case in _ops(module):
        print(case, describe(module, case))
