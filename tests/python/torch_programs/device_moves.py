"""The device idiom of most training scripts: a device picked from cuda.is_available(), the
model and each batch moved with .to(device) (with non_blocking=), .cpu() before .numpy(), and
.to()'s other forms (a dtype, a device and a dtype, another tensor, keywords)."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(device, repr(device), device.type, device.index, device == "cpu",
      torch.device("cpu") == torch.device("cpu"), str(torch.device("cuda", 1)), torch.device("cuda:0").index)
model = nn.Sequential(nn.Linear(3, 2), nn.ReLU()).to(device)
with torch.no_grad():  # the same weights in both engines
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1) / 3)
x = torch.tensor([[1.0, 2.0, -1.0]]).to(device, non_blocking=True)
y = model(x)
print(y.device, y.device.type, [round(v, 6) for v in y.cpu().detach().numpy().ravel().tolist()])
t = torch.ones(2)
f64 = torch.float64
print(t.to(device) is t, t.to(f64).dtype == f64, t.to("cpu", f64).dtype == f64,
      t.to(torch.zeros(1, dtype=f64)).dtype == f64, t.to(dtype=f64, device="cpu").dtype == f64,
      t.cpu() is t, model.cpu() is model, model.to(device) is model)
