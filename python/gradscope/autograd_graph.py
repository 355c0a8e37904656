"""gradscope.autograd_graph: torch.autograd.graph (torch 1.13): hooks on the tensors backward
nodes save.

Under `with saved_tensors_hooks(pack_hook, unpack_hook):` every tensor an op saves for its
backward (the engine's gs_saved_tensor_hooks_push) is given to pack_hook, and the node keeps
what pack_hook returns instead of the tensor; when backward needs it, unpack_hook gets that
object back and returns the tensor to use, which must have the saved tensor's shape and dtype.
Pairs nest (the innermost packs) and belong to the thread that entered them; tensors saved
outside any pair are kept as before. checkpoint(..., use_reentrant=False) is built on them.
"""
import contextlib as _contextlib

from gradscope import _gradscope as _c

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


def _raising_as_torch(hook):
    """hook, raising what torch raises when a saved-tensor hook fails inside its C++ code: a
    RuntimeError "Type: message" (chained to the original)."""
    def call(arg):
        try:
            return hook(arg)
        except Exception as e:
            raise RuntimeError(f"{type(e).__name__}: {e}") from e
    return call


class saved_tensors_hooks:
    """Context manager: pack_hook(tensor) -> anything is called for every tensor saved for
    backward inside it, unpack_hook(packed) -> Tensor when backward (or grad_fn) needs it back.
    A pack_hook gets a tensor of its own over the saved one (it may keep it or a copy); an
    exception in either hook makes the op or the backward raise RuntimeError("Type: message"),
    as torch does."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _c._saved_tensors_hooks_push(_raising_as_torch(self.pack_hook),
                                     _raising_as_torch(self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _c._saved_tensors_hooks_pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Context manager that keeps saved tensors on the CPU until backward, as torch's. Gradscope
    runs on the CPU only, so this is what torch does without CUDA: each saved tensor is kept as
    it is (pin_memory=False) or as a copy (pin_memory=True, which torch then makes in ordinary
    memory), and given back unchanged."""

    def __init__(self, pin_memory=False):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, tensor.clone())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@_contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Context manager under which entering saved_tensors_hooks (or save_on_cpu, or a
    non-reentrant checkpoint) raises RuntimeError(error_message): for code that does not work
    with them."""
    _c._saved_tensors_hooks_disable(error_message)
    try:
        yield
    finally:
        _c._saved_tensors_hooks_enable()
