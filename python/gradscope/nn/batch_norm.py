"""BatchNorm1d/2d/3d's attributes as torch's: num_features, eps, momentum, affine and
track_running_stats read from the engine layer, eps and momentum writable (``bn.momentum =
None`` switches to a cumulative average, as torch.optim.swa_utils.update_bn does), and
print(model) showing them as they are now. The layers themselves are the engine's
(python/nn.c, engine/nn/batch-norm.c)."""
from gradscope import _gradscope

_nn = _gradscope.nn


def _option(name, writable):
    def get(self):
        return _nn._batch_norm_options(self)[name]

    def put(self, value):
        options = _nn._batch_norm_options(self)
        options[name] = value
        _nn._batch_norm_configure(self, options["eps"], options["momentum"])

    return property(get, put if writable else None,
                    doc=f"torch's {name}" + (" (read at each forward)" if writable else ""))


def _extra_repr(self):
    o = _nn._batch_norm_options(self)
    return (f"{o['num_features']}, eps={o['eps']}, momentum={o['momentum']}, "
            f"affine={o['affine']}, track_running_stats={o['track_running_stats']}")


# The classes given torch's attributes: what torch calls _BatchNorm (swa_utils.update_bn
# finds the layers by it).
CLASSES = ()


def add_attributes(*classes):
    """Gives the engine's BatchNorm classes torch's attributes and print text."""
    global CLASSES
    CLASSES += classes
    for cls in classes:
        for name, writable in (("num_features", False), ("eps", True), ("momentum", True),
                               ("affine", False), ("track_running_stats", False)):
            setattr(cls, name, _option(name, writable))
        cls.extra_repr = _extra_repr
