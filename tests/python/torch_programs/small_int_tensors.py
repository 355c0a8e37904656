# uint8, int8 and int16 tensors: from NumPy (shared memory) and copied, torch's promotion
# (uint8 with int8 is int16), wrapping at each width, integer division, reductions in int64,
# casts, the .byte()/.char()/.short() methods, a uint8 mask, torch.save/load keeping dtypes.
import io
import warnings

import numpy as np
import torch

for np_dtype in (np.uint8, np.int8, np.int16):
    arr = np.arange(5, dtype=np_dtype)
    shared = torch.from_numpy(arr)
    arr[0] = 100
    print("from_numpy", shared, shared.dtype, shared[0].item(), shared.numpy().dtype)
    copied = torch.tensor(arr)
    arr[1] = 50
    print("copied", copied, copied[1].item(), copied.dtype)

u = torch.tensor([0, 1, 200, 255], dtype=torch.uint8)
c = torch.tensor([-128, -1, 5, 127], dtype=torch.int8)
s = torch.tensor([-32768, -1, 7, 32767], dtype=torch.int16)
print("dtype names", torch.uint8, torch.int8, torch.int16, torch.short, u.element_size(),
      s.element_size())
print("promotion", (u + c).dtype, (u + s).dtype, (c * s).dtype, (u + u).dtype,
      (u + torch.tensor([1, 1, 1, 1])).dtype, (c + torch.tensor(1000)).dtype,
      (u + True).dtype, (c + torch.tensor([1, 2, 3, 4], dtype=torch.int32)).dtype)
print("with python numbers", u + 1000, c * 3, s + 1.5, (u / 2).dtype)
print("uint8 with int8", u + c, u - c, u > c)
for x in (u, c, s):
    print(x.dtype, "neg abs", -x, x.abs())
    print(x.dtype, "wraps", x + x, x * x, x ** 3)
    print(x.dtype, "bitwise", ~x, x & 6, x | 1, x ^ 3)
    print(x.dtype, "compare", x == 1, x < 2, x >= 1.5)
    print(x.dtype, "sum", x.sum(), x.sum().dtype, x.cumsum(0))
    print(x.dtype, "max min argmax", x.max(), x.min(), x.argmax(), x.argmin())
    print(x.dtype, "casts", x.float(), x.long(), x.bool(), x.int())
    print(x.dtype, "tolist", x.tolist(), type(x[0].item()).__name__)
    values, order = x.sort()
    print(x.dtype, "sort", values, order)
print("floordiv", c // -1, s // -1, u // 3, c // 3, s // -7)
print("remainder", u % 7, c % -3, s % 5, c % 3)
print("relu clamp", torch.relu(c), torch.relu(u), s.clamp(-5, 300))
print("narrowing", torch.tensor([300, -1, 1000]).to(torch.uint8),
      torch.tensor([300, -1, 1000]).to(torch.int8), torch.tensor([40000, -1]).short())
print("from float", torch.tensor([1.7, -1.5, 255.9]).byte(), torch.tensor([1.7, -1.5]).char(),
      torch.tensor([2.5, -3.5]).short())
print("methods", s.byte(), u.char(), c.short(), u.byte() is u or u.byte().dtype)
print("creation", torch.zeros(2, dtype=torch.uint8), torch.ones(2, dtype=torch.int8),
      torch.full((2,), 7, dtype=torch.int16), torch.arange(3, dtype=torch.uint8))
print("2-d", torch.tensor([[1, 2], [3, 4]], dtype=torch.int16))
m8 = torch.tensor([[1, 2], [3, 4]], dtype=torch.uint8)
print("matmul", m8 @ m8, torch.tensor([[16, 16]], dtype=torch.uint8) @
      torch.tensor([[16], [17]], dtype=torch.uint8))
print("gather", s.reshape(2, 2).gather(1, torch.tensor([[1], [0]])))
print("cat stack", torch.cat([u, c]).dtype, torch.stack([c, c]).shape)
print("where", torch.where(c > 0, c, torch.tensor(0, dtype=torch.int8)))
print("empty", torch.tensor([], dtype=torch.uint8))
data = torch.arange(10, 14)
print("int8 array index", data[np.array([3, 0], dtype=np.int8)])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print("uint8 mask", data[torch.tensor([1, 0, 1, 1], dtype=torch.uint8)])
try:
    data[torch.tensor([1], dtype=torch.int16)]
    print("int16 index accepted")
except IndexError:
    print("int16 index refused")
back = torch.from_numpy(u.numpy())
print("numpy round trip", back, back.dtype)
buf = io.BytesIO()
torch.save({"u": u, "c": c, "s": s}, buf)
buf.seek(0)
loaded = torch.load(buf)
print("save load", loaded["u"], loaded["c"], loaded["s"])
