"""Module.state_dict and Module.load_state_dict as torch.nn.Module's, over the C type's own
(python/nn.c): state_dict is an OrderedDict (what torch.save writes and torch.load gives
back), keep_vars=True gives the parameters themselves, and load_state_dict checks every key
and shape first, then reports as PyTorch does (``Error(s) in loading state_dict for Linear:
Missing key(s) in state_dict: "bias".``) or returns the missing and unexpected keys
(strict=False). A refused dict leaves the model unchanged. Put on the C type (_extend_type),
so modules the C code makes and users' subclasses have them too."""
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from gradscope import _gradscope

Module = _gradscope.nn.Module
_c_state_dict = Module.state_dict
_c_load_state_dict = Module.load_state_dict


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it did not find and the keys it did not use."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
    """The parameters and buffers by dotted name, in registration order: detached tensors
    (keep_vars=True: the parameters and buffers themselves)."""
    if args:  # torch's old positional form state_dict(destination, prefix, keep_vars)
        destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars])[:3]
    own = _c_state_dict(self)
    if keep_vars:
        named = dict(self.named_parameters())
        named.update(self.named_buffers())
        own = {name: named[name] for name in own}
    if destination is None:
        destination = OrderedDict()
    for name, value in own.items():
        destination[prefix + name] = value
    return destination


def _shape_text(shape):
    return f"torch.Size([{', '.join(str(n) for n in shape)}])"


def load_state_dict(self, state_dict, strict=True):
    """Copies each tensor of state_dict into the parameter or buffer of the same name."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    own = _c_state_dict(self)
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    errors = []
    for key, param in own.items():
        if key not in state_dict:
            continue
        value = state_dict[key]
        if not isinstance(value, _gradscope.Tensor):
            errors.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                          f"or Tensor-like object from checkpoint but received {type(value)}")
        elif tuple(value.shape) != tuple(param.shape):
            errors.append(f"size mismatch for {key}: copying a param with shape "
                          f"{_shape_text(value.shape)} from checkpoint, the shape in current "
                          f"model is {_shape_text(param.shape)}.")
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            self._get_name(), "\n\t".join(errors)))
    _c_load_state_dict(self, {k: state_dict[k] for k in own if k in state_dict}, strict=False)
    return _IncompatibleKeys(missing, unexpected)


_gradscope._extend_type(Module, "state_dict", state_dict)
_gradscope._extend_type(Module, "load_state_dict", load_state_dict)
