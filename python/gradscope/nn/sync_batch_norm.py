"""nn.SyncBatchNorm, as torch's: batch normalization whose training statistics are the global
batch's, gathered over the ranks of gradscope.distributed. Each rank's mean and variance are
gathered and merged in rank order (Chan's parallel formula, as torch's
batch_norm_gather_stats_with_counts), and backward all-reduces the two sums the input's
gradient needs, so 2 ranks on half a batch each compute what one BatchNorm computes on the whole
batch. Its node is SyncBatchNormBackward, as torch's; the weight and bias gradients are this
rank's own sums (DDP averages them, as in torch). Outside training, or in a group of one, it is
F.batch_norm, as torch's. convert_sync_batchnorm swaps a model's BatchNorm1d/2d/3d for it,
keeping their parameters and buffers (the same tensors)."""
import gradscope as _gs  # gradscope.nn loads this while gradscope loads: names read at calls
from gradscope import _gradscope
from gradscope.function import Function
from gradscope.nn import functional as F
from gradscope.nn import layer_attributes as _layer_attributes
from gradscope.nn.parameter import Parameter

Module = _gradscope.nn.Module


def _dist():
    from gradscope import distributed  # it imports gradscope.nn
    return distributed


def _per_channel(t, dim):
    """t ([C]) shaped to broadcast over an input of dim dims: [1, C, 1, ...]."""
    return t.reshape([1, -1] + [1] * (dim - 2))


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, world):
        dim, channels = x.dim(), x.shape[1]
        dims = [0] + list(range(2, dim))
        count = x.numel() // channels
        mean = x.mean(dims)
        var = x.var(dims, unbiased=False)
        # every rank's (mean, biased var, count), merged in rank order
        mine = _gs.cat([mean, var, _gs.full((1,), float(count), dtype=x.dtype)]).contiguous()
        gathered = [_gs.zeros_like(mine) for _ in range(world)]
        _dist().all_gather(gathered, mine)
        total, g_mean, m2 = 0.0, None, None
        for g in gathered:
            n_b, m_b, v_b = float(g[-1].item()), g[:channels], g[channels:2 * channels]
            if n_b == 0:
                continue
            if g_mean is None:
                total, g_mean, m2 = n_b, m_b.clone(), v_b * n_b
                continue
            n_ab = total + n_b
            delta = m_b - g_mean
            g_mean = g_mean + delta * (n_b / n_ab)
            m2 = m2 + v_b * n_b + delta * delta * (total * n_b / n_ab)
            total = n_ab
        g_var = m2 / total
        invstd = 1.0 / _gs.sqrt(g_var + eps)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(g_mean * momentum)
        if running_var is not None:
            unbiased = g_var * (total / (total - 1)) if total > 1 else g_var
            running_var.mul_(1 - momentum).add_(unbiased * momentum)
        y = (x - _per_channel(g_mean, dim)) * _per_channel(invstd, dim)
        if weight is not None:
            y = y * _per_channel(weight, dim)
        if bias is not None:
            y = y + _per_channel(bias, dim)
        ctx.save_for_backward(x, weight, g_mean, invstd)
        ctx.total = total
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, invstd = ctx.saved_tensors
        dim = x.dim()
        dims = [0] + list(range(2, dim))
        xmu = x - _per_channel(mean, dim)
        sum_dy = grad.sum(dims)
        sum_dy_xmu = (grad * xmu).sum(dims)
        needs = ctx.needs_input_grad
        grad_weight = sum_dy_xmu * invstd if weight is not None and needs[1] else None
        grad_bias = sum_dy if needs[2] else None
        grad_input = None
        if needs[0]:
            both = _gs.cat([sum_dy, sum_dy_xmu]).contiguous()
            _dist().all_reduce(both)
            channels = mean.shape[0]
            mean_dy = both[:channels] / ctx.total
            mean_dy_xmu = both[channels:] / ctx.total
            scale = invstd * weight if weight is not None else invstd
            grad_input = (grad - _per_channel(mean_dy, dim)
                          - xmu * _per_channel(invstd * invstd * mean_dy_xmu, dim)) \
                * _per_channel(scale, dim)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


_SyncBatchNormFunction.__name__ = "SyncBatchNorm"  # its node: SyncBatchNormBackward, as torch's


class SyncBatchNorm(Module):
    """torch.nn.SyncBatchNorm(num_features, eps=1e-05, momentum=0.1, affine=True,
    track_running_stats=True, process_group=None): BatchNorm over the global batch of every
    rank (process_group: None, the default group, is the only one gradscope has)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__()
        if process_group is not None:
            raise ValueError("SyncBatchNorm(): process_group must be None (the default group, "
                             "the only one gradscope has)")
        dtype = dtype or _gs.get_default_dtype()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.process_group = None
        if affine:
            self.weight = Parameter(_gs.ones(num_features, dtype=dtype))
            self.bias = Parameter(_gs.zeros(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _gs.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _gs.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _gs.tensor(0, dtype=_gs.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")

    def forward(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        running_mean = self.running_mean if use_running else None
        running_var = self.running_var if use_running else None
        dist = _dist()
        world = dist.get_world_size() if dist.is_initialized() else 1
        if not (bn_training and world > 1):
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias,
                                bn_training, factor, self.eps)
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean,
                                            running_var, self.eps, factor, world)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm1d/2d/3d in it replaced by a SyncBatchNorm holding the
        same parameters and buffers (module itself when it is one)."""
        out = module
        if isinstance(module, _layer_attributes.BATCH_NORMS):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group,
                      dtype=module.running_mean.dtype if module.track_running_stats
                      else module.weight.dtype)
            if module.affine:
                with _gs.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            if module.track_running_stats:
                out.running_mean = module.running_mean
                out.running_var = module.running_var
                out.num_batches_tracked = module.num_batches_tracked
            out.train(module.training)
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
