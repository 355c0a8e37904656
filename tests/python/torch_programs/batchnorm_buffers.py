# BatchNorm running statistics as buffers, train and eval.
import torch
import torch.nn as nn

bn = nn.BatchNorm1d(3)
print("buffers", [n for n, _ in bn.named_buffers()])
print("keys", list(bn.state_dict().keys()))
x = torch.tensor([[1.0, 2.0, 3.0], [3.0, 0.0, -1.0], [2.0, 4.0, 1.0], [0.0, 2.0, 5.0]])
y = bn(x)
print("train out", [[round(v, 5) for v in r] for r in y.tolist()])
print("running_mean", [round(v, 6) for v in bn.running_mean.tolist()])
print("running_var", [round(v, 6) for v in bn.running_var.tolist()])
bn(x * 2)
print("running_mean 2", [round(v, 6) for v in bn.running_mean.tolist()])
bn.eval()
z = bn(x)
print("eval out", [[round(v, 5) for v in r] for r in z.tolist()])
print("training", bn.training)
