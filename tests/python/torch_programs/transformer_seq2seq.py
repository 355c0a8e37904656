# A small sequence-to-sequence nn.Transformer as tutorials write it: encoder and decoder stacks
# (post-norm and pre-norm, batch second and batch first), the causal mask from
# generate_square_subsequent_mask, padding masks for source, target and memory, a decoder used
# on its own over a given memory, print(model), torch's parameter names, a state_dict carried
# to a second model, and three Adam steps of a token-prediction loss.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fill(module, scale=0.3):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.37 + k) * scale).reshape(p.shape))


def show(name, t, digits=5):
    print(name, tuple(t.shape), [round(v, digits) for v in t.flatten().tolist()[:8]])


model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                       dim_feedforward=16, dropout=0.0)
print(model)
print(len(list(model.parameters())), [n for n, _ in model.named_parameters()][:12])
print(sum(p.numel() for p in model.parameters()))
fill(model)
src = torch.cos(torch.arange(5 * 2 * 8, dtype=torch.float32) * 0.11).reshape(5, 2, 8)
tgt = torch.sin(torch.arange(4 * 2 * 8, dtype=torch.float32) * 0.17).reshape(4, 2, 8)
causal = nn.Transformer.generate_square_subsequent_mask(4)
print(causal)
show("plain", model(src, tgt))
show("causal", model(src, tgt, tgt_mask=causal))
src_pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
tgt_pad = torch.tensor([[False] * 4, [False] * 3 + [True]])
out = model(src, tgt, tgt_mask=causal, src_key_padding_mask=src_pad,
            tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
show("padded", out)
show("padded batch 1", out[:, 1])
bool_causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
show("bool causal", model(src, tgt, tgt_mask=bool_causal))
memory_mask = torch.linspace(-1, 0, 20).reshape(4, 5)
show("memory mask", model(src, tgt, memory_mask=memory_mask))
try:
    model(src, tgt[:, :1])
except RuntimeError as e:
    print("error:", e)

first = nn.Transformer(d_model=8, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                       dim_feedforward=12, dropout=0.0, activation="gelu", batch_first=True,
                       norm_first=True)
fill(first, 0.25)
show("batch first pre-norm gelu", first(src.transpose(0, 1), tgt.transpose(0, 1)))

layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
decoder = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(8))
fill(decoder, 0.2)
print([(n, tuple(p.shape)) for n, p in decoder.named_parameters()][:6])
memory = torch.linspace(-1, 1, 3 * 2 * 8).reshape(3, 2, 8)
show("decoder", decoder(tgt, memory, tgt_mask=causal))
fill(layer, 0.2)  # the decoder's layers are copies: this one is still as constructed
show("decoder layer", layer(tgt, memory))

other = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                       dim_feedforward=16, dropout=0.0)
other.load_state_dict(model.state_dict())
show("loaded", other(src, tgt, tgt_mask=causal))
print(sorted(model.state_dict().keys())[:6])

head = nn.Linear(8, 6)
fill(head)
opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=0.01)
targets = torch.tensor([[1, 2], [3, 4], [5, 0], [2, 2]])
for step in range(3):
    opt.zero_grad()
    logits = head(model(src, tgt, tgt_mask=causal))
    loss = F.cross_entropy(logits.reshape(-1, 6), targets.reshape(-1))
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 5))
show("after", model(src, tgt, tgt_mask=causal))
show("grad", model.decoder.layers[0].multihead_attn.in_proj_weight.grad[16:])
print(torch.tensor([1.5, float("inf"), 0.0]), torch.tensor([0.0, float("nan")]),
      torch.tensor([[12.0, -float("inf")], [0.0, 3.0]]))
