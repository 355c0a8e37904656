# as_strided: sliding windows over a signal (a 1-D convolution by hand), the gradient of
# overlapping windows, a view of a transposed matrix's storage, storage offsets, views that
# reach past a slice into its base's storage (their elements get no gradient), writes through
# windows, and the errors for out-of-bounds sizes and negative strides.
import torch

signal = torch.tensor([0.5, -1.0, 2.0, 0.25, 3.0, -0.5, 1.5, 1.0], requires_grad=True)
kernel = torch.tensor([0.2, -0.4, 0.6])
windows = signal.as_strided((6, 3), (1, 1))
print("windows", windows.shape, windows.stride(), windows.storage_offset())
out = (windows * kernel).sum(1)
print("conv", [round(v, 6) for v in out.tolist()])
(out ** 2).sum().backward()
print("signal.grad", [round(v, 6) for v in signal.grad.tolist()])
print("grad_fn", windows.grad_fn.name())

m = torch.arange(12.0).reshape(3, 4)
mt = m.t()
print("of t", mt.as_strided((2, 3), (1, 4), 1).tolist())
print("torch.as_strided", torch.as_strided(m, (2, 2), (4, 1), 5).tolist())
print("default offset", m[1].as_strided((2,), (2,)).tolist(), m[1].storage_offset())

base = torch.arange(6.0, requires_grad=True)
past = base[2:4].as_strided((4,), (1,), 0)
past.sum().backward()
print("past the slice", past.tolist(), base.grad.tolist())

buf = torch.zeros(6)
w = buf.as_strided((2, 3), (3, 1))
w[1].fill_(7.0)
buf.as_strided((3,), (2,), 0).add_(1.0)
print("writes", buf.tolist())

for args in [((2, 3), (1, 2)), ((2,), (-1,)), ((2,), (1,), -1)]:
    try:
        torch.zeros(4).as_strided(*args)
    except RuntimeError as e:
        # torch prefixes setStorage or Tensor, gradscope as_strided: the sentence is the same
        msg = str(e)
        print("RuntimeError:", msg[min(msg.find(w) for w in ("sizes", "Negative", "invalid")
                                       if w in msg):])
