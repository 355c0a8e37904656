"""nn.EmbeddingBag, nn.MultiheadAttention and nn.TransformerEncoderLayer/TransformerEncoder
(with F.embedding_bag, F.multi_head_attention_forward's computation and torch 2's
F.scaled_dot_product_attention) over the engine's
index_select, matrix products, softmax and layers, with torch 1.13's parameter names, shapes,
initialisation and print(model) text, so a state_dict saved by one loads into the other.

Attention is torch 1.13's: q, k and v projections (one [3E, E] in_proj_weight when the three
share embed_dim), heads split as [N * heads, L, head_dim], q scaled by 1/sqrt(head_dim), masks
added to the scores as -inf (boolean, True masked) or as given (float), softmax over keys,
dropout of the weights while training, then out_proj. A bag of embeddings is the product of a
[bags, rows] matrix of each row's share (1 for sum, 1/count for mean) with the rows it looks
up, so empty bags are zeros and gradients reach every row looked up."""
import copy
import math

from gradscope import _gradscope as _c
from gradscope._missing import NotSupportedError
from gradscope.nn import init
from gradscope.nn.layers import ModuleList
from gradscope.nn.parameter import Parameter

Module = _c.nn.Module
F = _c.nn.functional


# ---- embedding bags ---------------------------------------------------------------------------

def _bags(input, offsets, include_last_offset):
    """The bags as lists of positions into input.reshape(-1)."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences.")
        b, length = input.shape
        return [list(range(i * length, (i + 1) * length)) for i in range(b)]
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    starts = [int(o) for o in offsets.tolist()]
    total = input.shape[0]
    if starts and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {starts[0]}")
    ends = starts[1:] + [total]
    if include_last_offset:
        starts, ends = starts[:-1], ends[:-1]
    return [list(range(s, e)) for s, e in zip(starts, ends)]


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """The sum, mean or max of each bag of weight's rows: input [B, L] holds B bags of L
    indices, or input [T] with offsets [B] the start of each bag. Empty bags are zeros;
    padding_idx's entries are left out (not counted by mean)."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotSupportedError("embedding_bag(max_norm=, scale_grad_by_freq=True, sparse=True) "
                                "is not supported by gradscope yet")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    flat = input.reshape(-1)
    indices = [int(i) for i in flat.tolist()]
    bags = _bags(input, offsets, include_last_offset)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    kept = [[t for t in bag if indices[t] != padding_idx] for bag in bags]
    d = weight.shape[1]
    if mode == "max":
        rows = weight.index_select(0, flat)
        out = [rows.index_select(0, _c.tensor(bag, dtype=_c.int64)).amax(0) if bag
               else _c.zeros(d, dtype=weight.dtype) for bag in kept]
        return _c.stack(out, 0) if out else _c.zeros(0, d, dtype=weight.dtype)
    share = [[0.0] * len(indices) for _ in bags]
    for b, bag in enumerate(kept):
        for t in bag:
            share[b][t] += 1.0 / len(bag) if mode == "mean" else 1.0
    matrix = _c.tensor(share, dtype=weight.dtype).reshape(len(bags), len(indices))
    if per_sample_weights is not None:
        matrix = matrix * per_sample_weights.reshape(1, -1)
    return matrix.mm(weight.index_select(0, flat))


class EmbeddingBag(Module):
    """F.embedding_bag as a module: weight [num_embeddings, embedding_dim] drawn from N(0, 1)
    (the padding_idx row zero)."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset = include_last_offset
        if padding_idx is not None:
            if padding_idx < 0:
                padding_idx += num_embeddings
            if not 0 <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_c.empty(num_embeddings, embedding_dim,
                                                   dtype=dtype or _c.float32))
            init.normal_(self.weight)
            if padding_idx is not None:
                with _c.no_grad():
                    self.weight[padding_idx].fill_(0)
        else:
            self.weight = Parameter(_weight)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


# ---- attention --------------------------------------------------------------------------------

class NonDynamicallyQuantizableLinear(_c.nn.Linear):
    """nn.Linear under the name torch gives MultiheadAttention's out_proj."""


def _additive_mask(mask, dtype, what):
    """A boolean mask (True: masked) as 0 / -inf, a float mask as given."""
    if mask.dtype == _c.bool:
        return _c.zeros(*mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {what} are supported")
    return mask


def _attention(query, key, value, num_heads, w_q, w_k, w_v, b_q, b_k, b_v, out_w, out_b,
               dropout_p, training, key_padding_mask, need_weights, attn_mask,
               average_attn_weights):
    """torch 1.13's multi_head_attention_forward for inputs [L, N, E] (batch second)."""
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    head_dim = embed_dim // num_heads
    q = F.linear(query, w_q, b_q)
    k = F.linear(key, w_k, b_k)
    v = F.linear(value, w_v, b_v)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(src_len, bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(src_len, bsz * num_heads, head_dim).transpose(0, 1)
    mask = None
    if attn_mask is not None:
        mask = _additive_mask(attn_mask, q.dtype, "attn_mask")
        if mask.dim() == 2:
            if tuple(mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but "
                                   f"should be {(tgt_len, src_len)}.")
            mask = mask.unsqueeze(0)
        elif tuple(mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but "
                               f"should be {(bsz * num_heads, tgt_len, src_len)}.")
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {tuple(key_padding_mask.shape)}")
        pad = _additive_mask(key_padding_mask, q.dtype, "key_padding_mask")
        pad = pad.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len) \
            .reshape(bsz * num_heads, 1, src_len)
        mask = pad if mask is None else mask + pad
    scores = (q / math.sqrt(head_dim)).bmm(k.transpose(1, 2))
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0 and training:
        weights = F.dropout(weights, dropout_p, True)
    out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_w, out_b).reshape(tgt_len, bsz, embed_dim)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    return out, weights


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    """softmax(query @ key^T * scale + mask) @ value over the last two dims, as torch 2's
    F.scaled_dot_product_attention: query [..., L, E], key [..., S, E], value [..., S, Ev];
    scale 1/sqrt(E) unless given; attn_mask a bool mask (True: takes part, the opposite of
    MultiheadAttention's) or a float one added to the scores; is_causal masks keys after
    each query; dropout_p drops weights (always, as torch's function does)."""
    L, S = query.shape[-2], key.shape[-2]
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: expected query and key to share "
                           f"their last dim, got {tuple(query.shape)} and {tuple(key.shape)}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: pass attn_mask or is_causal=True, "
                           "not both")
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * factor
    if is_causal:
        attn_mask = _c.ones(L, S, dtype=_c.bool).tril()
    if attn_mask is not None:
        scores = scores + (_additive_mask(attn_mask.logical_not(), scores.dtype, "attn_mask")
                           if attn_mask.dtype == _c.bool else attn_mask)
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, True)
    return weights @ value


class MultiheadAttention(Module):
    """Attention over num_heads heads, as torch.nn.MultiheadAttention: in_proj_weight [3E, E]
    (xavier_uniform_) and in_proj_bias [3E] (zeros), or q/k/v_proj_weight when kdim or vdim
    differ from embed_dim, and out_proj (bias zeros). Inputs are [L, N, E] ([N, L, E] with
    batch_first) or unbatched [L, E]; returns (output, weights averaged over heads or None)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotSupportedError("MultiheadAttention(add_bias_kv=True, add_zero_attn=True) "
                                    "is not supported by gradscope yet")
        dtype = dtype or _c.float32
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_c.empty(3 * embed_dim, embed_dim, dtype=dtype))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = Parameter(_c.empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(_c.empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(_c.empty(embed_dim, self.vdim, dtype=dtype))
            self.in_proj_weight = None
        if bias:
            self.in_proj_bias = Parameter(_c.zeros(3 * embed_dim, dtype=dtype))
        else:
            self.in_proj_bias = None
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if bias:
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True):
        batched = query.dim() == 3
        if not batched:
            if query.dim() != 2:
                raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but "
                                     f"received {query.dim()}-D query tensor")
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            w_q, w_k, w_v = w.narrow(0, 0, e), w.narrow(0, e, e), w.narrow(0, 2 * e, e)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b = self.in_proj_bias
        b_q, b_k, b_v = (None, None, None) if b is None else \
            (b.narrow(0, 0, e), b.narrow(0, e, e), b.narrow(0, 2 * e, e))
        out, weights = _attention(query, key, value, self.num_heads, w_q, w_k, w_v, b_q, b_k,
                                  b_v, self.out_proj.weight, self.out_proj.bias, self.dropout,
                                  self.training, key_padding_mask, need_weights, attn_mask,
                                  average_attn_weights)
        if not batched:
            return out.squeeze(1), (weights.squeeze(0) if weights is not None else None)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self):
        return ""


# ---- transformer encoder ----------------------------------------------------------------------

def _activation(name):
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {name}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (linear1, activation, linear2), each with
    dropout and a residual, normalised after (or, with norm_first, before) each, as torch's."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-05, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = _c.nn.Linear(d_model, dim_feedforward)
        self.dropout = _c.nn.Dropout(dropout)
        self.linear2 = _c.nn.Linear(dim_feedforward, d_model)
        self.norm_first = norm_first
        self.norm1 = _c.nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = _c.nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = _c.nn.Dropout(dropout)
        self.dropout2 = _c.nn.Dropout(dropout)
        self.activation = _activation(activation) if isinstance(activation, str) else activation

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def extra_repr(self):
        return ""


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer run in turn, then norm if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        if not isinstance(encoder_layer, Module):  # before num_layers copies of it, as ModuleList
            raise TypeError(f"{type(encoder_layer).__name__} is not a Module subclass")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None):
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            out = self.norm(out)
        return out

    def extra_repr(self):
        return ""


# ---- transformer decoder and the whole transformer --------------------------------------------

class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention from the target to the encoder's memory, then
    the feed-forward block, each with dropout and a residual, normalised after (or, with
    norm_first, before) each, as torch's: norm1..3, dropout1..3, in torch's order."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-05, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = _c.nn.Linear(d_model, dim_feedforward)
        self.dropout = _c.nn.Dropout(dropout)
        self.linear2 = _c.nn.Linear(dim_feedforward, d_model)
        self.norm_first = norm_first
        self.norm1 = _c.nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = _c.nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm3 = _c.nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = _c.nn.Dropout(dropout)
        self.dropout2 = _c.nn.Dropout(dropout)
        self.dropout3 = _c.nn.Dropout(dropout)
        self.activation = _activation(activation) if isinstance(activation, str) else activation

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def extra_repr(self):
        return ""


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer run in turn over the target, each attending to the
    same memory, then norm if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        if not isinstance(decoder_layer, Module):  # before num_layers copies of it, as ModuleList
            raise TypeError(f"{type(decoder_layer).__name__} is not a Module subclass")
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            out = self.norm(out)
        return out

    def extra_repr(self):
        return ""


class Transformer(Module):
    """torch.nn.Transformer: an encoder of num_encoder_layers TransformerEncoderLayers and a
    decoder of num_decoder_layers TransformerDecoderLayers, each stack ending in a LayerNorm
    (or custom_encoder / custom_decoder), every parameter of two or more dims drawn by
    xavier_uniform_ as torch's _reset_parameters. forward(src, tgt, ...) encodes src into the
    memory the decoder attends to and returns the decoder's output (tgt's shape)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-05, batch_first=False, norm_first=False,
                 device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              _c.nn.LayerNorm(d_model, eps=layer_norm_eps))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              _c.nn.LayerNorm(d_model, eps=layer_norm_eps))
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        batch = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device="cpu"):
        """A float [sz, sz] mask: -inf above the diagonal (a position attends to itself and
        earlier ones), 0 elsewhere."""
        return _c.full((sz, sz), float("-inf")).triu(1)

    def extra_repr(self):
        return ""
