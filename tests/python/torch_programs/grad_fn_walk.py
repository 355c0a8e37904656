# grad_fn objects: a small network's graph walked from the loss through next_functions,
# printing each node's name once (AccumulateGrad nodes name their leaf's shape), and what
# grad_fn, is_leaf, _base and node identity say before and after backward.
import torch

layer = torch.nn.Linear(3, 2)
with torch.no_grad():
    layer.weight.copy_(torch.tensor([[0.5, -0.25, 0.1], [0.3, 0.2, -0.4]]))
    layer.bias.copy_(torch.tensor([0.1, 0.6]))
x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
scale = torch.tensor([2.0, -1.0], requires_grad=True)
h = layer(x).relu()
v = h.view(4)
out = (v.view(2, 2) * scale).sum(1)
loss = (out.exp() + out * 3 - 1).mean()


def walk(node, depth, seen):
    if node is None:
        print("  " * depth + "None")
        return
    name = node.name()
    if hasattr(node, "variable"):
        name += " of " + str(list(node.variable.shape))
    if node in seen:
        print("  " * depth + name + " (seen)")
        return
    seen.add(node)
    print("  " * depth + name)
    for child, nr in node.next_functions:
        walk(child, depth + 1, seen)


walk(loss.grad_fn, 0, set())
print("leaf grad_fn", x.grad_fn, scale.grad_fn, layer.weight.grad_fn)
print("is_leaf", x.is_leaf, scale.is_leaf, h.is_leaf, loss.is_leaf)
print("requires_grad", x.requires_grad, h.requires_grad)
print("same node", loss.grad_fn == loss.grad_fn, hash(h.grad_fn) == hash(h.grad_fn))
print("different nodes", h.grad_fn == out.grad_fn)
acc = out.grad_fn.next_functions[0][0].next_functions[1][0]
print("accumulator", acc.name(), acc.variable is scale, acc.next_functions)
print("views", v._base is h, v.view(2, 2)._base is h, h._base, x.detach()._base)
print("metadata", loss.grad_fn.metadata)
loss.grad_fn.metadata["step"] = 1
print("metadata kept", loss.grad_fn.metadata)
loss.backward()
print("after backward", loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name())
print("scale.grad", [round(g, 5) for g in scale.grad.tolist()])
print("weight.grad", [[round(g, 5) for g in row] for row in layer.weight.grad.tolist()])
with torch.no_grad():
    q = h * 2
print("no_grad result", q.grad_fn, q.requires_grad)
