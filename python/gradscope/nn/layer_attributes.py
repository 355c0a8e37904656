"""torch's attributes on the engine's layers, read from and written to the engine at each use
as torch's modules read theirs at each forward: BatchNorm1d/2d/3d's num_features, eps,
momentum, affine and track_running_stats (eps and momentum writable; ``bn.momentum = None``
switches to a cumulative average, as torch.optim.swa_utils.update_bn does), Dropout's p
(writable) and inplace, LayerNorm's normalized_shape, eps (writable) and elementwise_affine,
and Embedding's options; print(model) shows them as they are now. The layers themselves are the
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


def add_layer_norm_attributes(cls):
    """Gives the engine's LayerNorm class torch's normalized_shape, eps (read at each forward)
    and elementwise_affine, and its print text."""
    cls.normalized_shape = property(lambda self: _nn._layer_norm_options(self)["normalized_shape"],
                                    doc="torch's normalized_shape: the input's last dims (a tuple)")
    cls.eps = property(lambda self: _nn._layer_norm_options(self)["eps"],
                       lambda self, eps: _nn._layer_norm_set_eps(self, eps),
                       doc="torch's eps (read at each forward)")
    cls.elementwise_affine = property(
        lambda self: _nn._layer_norm_options(self)["elementwise_affine"],
        doc="torch's elementwise_affine: whether the layer has weight and bias")

    def extra_repr(self):
        o = _nn._layer_norm_options(self)
        return (f"{o['normalized_shape']}, eps={o['eps']}, "
                f"elementwise_affine={o['elementwise_affine']}")

    cls.extra_repr = extra_repr


def _embedding_option(name):
    def get(self):
        return _nn._embedding_options(self)[name]

    def put(self, value):
        options = _nn._embedding_options(self)
        options[name] = value
        _nn._embedding_configure(self, options["padding_idx"], options["max_norm"],
                                 options["norm_type"], options["scale_grad_by_freq"])

    return property(get, put, doc=f"torch's {name} (read at each forward)")


def _embedding_repr(self):
    o = _nn._embedding_options(self)
    text = f"{self.num_embeddings}, {self.embedding_dim}"
    if o["padding_idx"] is not None:
        text += f", padding_idx={o['padding_idx']}"
    if o["max_norm"] is not None:
        text += f", max_norm={o['max_norm']}"
    if o["norm_type"] != 2:
        text += f", norm_type={o['norm_type']}"
    if o["scale_grad_by_freq"]:
        text += f", scale_grad_by_freq={o['scale_grad_by_freq']}"
    return text


def add_embedding_attributes(cls):
    """Gives the engine's Embedding class torch's num_embeddings, embedding_dim, padding_idx,
    max_norm, norm_type, scale_grad_by_freq (those four writable) and sparse, and its print
    text."""
    cls.num_embeddings = property(lambda self: self.weight.shape[0],
                                  doc="torch's num_embeddings: the weight's rows")
    cls.embedding_dim = property(lambda self: self.weight.shape[1],
                                 doc="torch's embedding_dim: the weight's columns")
    for name in ("padding_idx", "max_norm", "norm_type", "scale_grad_by_freq"):
        setattr(cls, name, _embedding_option(name))
    cls.sparse = property(lambda self: False,
                          doc="torch's sparse: always False (gradscope has no sparse gradients)")
    cls.extra_repr = _embedding_repr
