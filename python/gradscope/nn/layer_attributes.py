"""torch's attributes on the engine's layers, read from and written to the engine at each use
as torch's modules read theirs at each forward: BatchNorm1d/2d/3d's num_features, eps,
momentum, affine and track_running_stats (eps and momentum writable; ``bn.momentum = None``
switches to a cumulative average, as torch.optim.swa_utils.update_bn does), and Dropout's p
(writable) and inplace; print(model) shows them as they are now. The layers themselves are the
engine's (python/nn.c, engine/nn/batch-norm.c, engine/nn/layers.c)."""
from gradscope import _gradscope

_nn = _gradscope.nn

# The batch norm classes: what torch calls _BatchNorm (swa_utils.update_bn finds the layers by
# it, copy.deepcopy carries their options over).
BATCH_NORMS = ()


def _batch_norm_option(name, writable):
    def get(self):
        return _nn._batch_norm_options(self)[name]

    def put(self, value):
        options = _nn._batch_norm_options(self)
        options[name] = value
        _nn._batch_norm_configure(self, options["eps"], options["momentum"])

    return property(get, put if writable else None,
                    doc=f"torch's {name}" + (" (read at each forward)" if writable else ""))


def _batch_norm_repr(self):
    o = _nn._batch_norm_options(self)
    return (f"{o['num_features']}, eps={o['eps']}, momentum={o['momentum']}, "
            f"affine={o['affine']}, track_running_stats={o['track_running_stats']}")


def add_batch_norm_attributes(*classes):
    """Gives the engine's BatchNorm classes torch's attributes and print text."""
    global BATCH_NORMS
    BATCH_NORMS += classes
    for cls in classes:
        for name, writable in (("num_features", False), ("eps", True), ("momentum", True),
                               ("affine", False), ("track_running_stats", False)):
            setattr(cls, name, _batch_norm_option(name, writable))
        cls.extra_repr = _batch_norm_repr


def add_dropout_attributes(cls):
    """Gives the engine's Dropout class torch's p (read at each forward) and inplace."""
    cls.p = property(lambda self: _nn._dropout_p(self),
                     lambda self, p: _nn._dropout_set_p(self, p),
                     doc="torch's p: the probability of a zero (read at each forward)")
    cls.inplace = property(lambda self: _nn._module_inplace(self),
                           doc="torch's inplace: whether forward writes into its input")
    cls.extra_repr = lambda self: f"p={self.p}, inplace={self.inplace}"
