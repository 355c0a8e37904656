# A small transformer text classifier as tutorials write it: nn.EmbeddingBag (sum and mean,
# offsets, padding_idx, per_sample_weights), nn.MultiheadAttention (batch first and second,
# need_weights, attn_mask boolean and float, key_padding_mask, unbatched input, kdim/vdim) and
# nn.TransformerEncoder of two TransformerEncoderLayers (post- and pre-norm, GELU), with torch's
# parameter names, a state_dict carried from one model to another, and three Adam steps.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fill(module, scale=0.3):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.61 + k) * scale).reshape(p.shape))


def show(name, t, digits=5):
    print(name, tuple(t.shape), [round(v, digits) for v in t.flatten().tolist()[:8]])


bag = nn.EmbeddingBag(10, 4, mode="sum", padding_idx=0)
fill(bag)
words = torch.tensor([1, 2, 0, 4, 5, 9, 3])
offsets = torch.tensor([0, 3, 3, 5])
show("bag sum", bag(words, offsets))
show("bag weighted", bag(words, offsets, per_sample_weights=torch.linspace(0.5, 2, 7)))
mean_bag = nn.EmbeddingBag(10, 4)
fill(mean_bag)
show("bag mean 2d", mean_bag(torch.tensor([[1, 2, 3], [4, 4, 9]])))
show("F.embedding_bag max", F.embedding_bag(words, mean_bag.weight, offsets[:3], mode="max"))
print(bag, mean_bag)

mha = nn.MultiheadAttention(8, 2)
fill(mha)
q = torch.cos(torch.arange(5 * 2 * 8, dtype=torch.float32) * 0.13).reshape(5, 2, 8)
kv = torch.sin(torch.arange(6 * 2 * 8, dtype=torch.float32) * 0.07).reshape(6, 2, 8)
out, w = mha(q, kv, kv)
show("mha", out)
show("mha weights", w)
causal = torch.triu(torch.ones(5, 6, dtype=torch.bool), diagonal=1)
padding = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
out, w = mha(q, kv, kv, attn_mask=causal, key_padding_mask=padding, average_attn_weights=False)
show("mha masked", out)
show("mha masked weights", w[1, 1])
float_mask = torch.linspace(-1, 1, 30).reshape(5, 6)
out, w = mha(q, kv, kv, attn_mask=float_mask, need_weights=False)
show("mha float mask", out)
print("no weights", w)
out, w = mha(q[:, 0], kv[:, 0], kv[:, 0])
show("mha unbatched", out)
show("mha unbatched weights", w)

first = nn.MultiheadAttention(8, 4, batch_first=True, kdim=3, vdim=5)
fill(first)
print([(n, tuple(p.shape)) for n, p in first.named_parameters()])
k3 = torch.linspace(-1, 1, 2 * 6 * 3).reshape(2, 6, 3)
v5 = torch.linspace(1, -1, 2 * 6 * 5).reshape(2, 6, 5)
out, w = first(q.transpose(0, 1), k3, v5)
show("kdim vdim", out)
show("kdim vdim weights", w)


class Classifier(nn.Module):
    def __init__(self, norm_first, activation):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                           activation=activation, batch_first=True,
                                           norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(8, 3)

    def forward(self, tokens, padding=None):
        h = self.encoder(self.embed(tokens), src_key_padding_mask=padding)
        return self.head(h.mean(1))


tokens = torch.tensor([[1, 4, 2, 7, 0], [3, 3, 9, 5, 8]])
labels = torch.tensor([2, 0])
pad = torch.tensor([[False] * 4 + [True], [False] * 5])
for norm_first, activation in ((False, "relu"), (True, "gelu")):
    model = Classifier(norm_first, activation)
    fill(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(tokens, pad), labels)
        loss.backward()
        opt.step()
        print("norm_first", norm_first, "step", step, round(loss.item(), 6))
    grad = model.encoder.layers[0].self_attn.in_proj_weight.grad
    show("in_proj grad", grad, 6)
    copy = Classifier(norm_first, activation)
    copy.load_state_dict(model.state_dict())
    show("copy", copy(tokens, pad), 6)

print(model.encoder.layers[0])
print(len(model.state_dict()), list(model.state_dict())[:6])
