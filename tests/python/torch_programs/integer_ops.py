# Integer and bool operators, one_hot, repeat, norm.
import torch
import torch.nn.functional as F

a = torch.tensor([7, -7, 5, 0])
b = torch.tensor([2, 2, -3, 4])
print("floordiv", (a // b).tolist(), (a // 3).tolist())
print("mod", (a % b).tolist(), (a % 3).tolist(), torch.remainder(a, 4).tolist())
print("and or xor", (a & b).tolist(), (a | b).tolist(), (a ^ b).tolist(), (~a).tolist())
m = a > 0
print("bool", (~m).tolist(), (m & (b > 0)).tolist(), (m | (b < 0)).tolist())
f = torch.tensor([5.5, -5.5, 2.0])
print("float floordiv mod", (f // 2).tolist(), (f % 2).tolist(), (f % -2).tolist())
labels = torch.tensor([0, 3, 1])
print("one_hot", F.one_hot(labels).tolist())
print("one_hot 5", F.one_hot(labels, num_classes=5).sum(0).tolist())
print("repeat", torch.tensor([1, 2]).repeat(2, 3).tolist())
print("repeat 3d", torch.tensor([[1.0], [2.0]]).repeat(2, 1, 2).shape)
x = torch.tensor([[3.0, -4.0], [1.0, 2.0]], requires_grad=True)
print("norm", x.norm().item(), x.norm(dim=1).tolist(), x.norm(p=1).item())
print("norm inf", x.norm(p=float("inf")).item())
x.norm().backward()
print("grad norm", [round(v, 6) for v in x.grad.flatten().tolist()])
r = torch.tensor([5.5, -2.5], requires_grad=True)
(r % 2.0).sum().backward()
print("grad mod", r.grad.tolist())
