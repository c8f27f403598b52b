"""A Qwen2-style transformer with bidirectional (or causal) attention.

RMSNorm, rotary embeddings (rotate-half), grouped-query attention, SwiGLU; optional QKV biases
(Qwen2), per-head q/k norms (Qwen3) and tied embeddings. Parameter names follow the Qwen2 layout
(`model.layers.{i}.self_attn.q_proj`, ...) so that our own checkpoints and Qwen2-family checkpoints
load the same way.

The forward pass takes the keys and values of positions already encoded (`cache`) so that a
denoising step can run over the hole positions alone against a cached context. The model knows
nothing about tokenization or masking rules: it maps token ids and positions to logits.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

KV = tuple[torch.Tensor, torch.Tensor]  # (B, n_kv, T, hd) each


@dataclass(slots=True)
class ModelConfig:
    vocab_size: int = 8192
    hidden_size: int = 256
    num_layers: int = 6
    num_heads: int = 8
    num_kv_heads: int = 4  # grouped-query attention: num_heads // num_kv_heads queries share a K/V
    head_dim: int = 32
    intermediate_size: int = 688  # SwiGLU width, ~8/3 of hidden rounded to a multiple of 16
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 2048
    tie_word_embeddings: bool = True
    qkv_bias: bool = False  # Qwen2 has biases on q/k/v projections
    qk_norm: bool = False  # Qwen3 normalises each head's q and k before rotary
    rope_in_model_dtype: bool = False  # cos/sin cast to the weights' dtype (Qwen2/Qwen3 references); else fp32
    causal: bool = False  # False: bidirectional (diffusion); True: autoregressive
    logits_shift: bool = True  # position i is predicted from the hidden state at i-1 (Dream)
    mask_token_id: int = 0
    pad_token_id: int = 1
    eos_token_id: int = 2
    family: str = "infill"
    snippet_context: bool = False  # trained with `<|snippet|>` context before the prefix: canvases lay snippets in
    edit_canvas: str = ""  # the edit layout it was trained on ("shown" or "masked", `infill.canvas`); "" none
    edit_context: int = 0  # the window its edit canvases were trained in, the most an edit job is laid out
    #   in; 0: its context
    fim_sentinels: bool = False  # autoregressive, trained on PSM/SPM rearrangements (infill.fim_ar): it fills
    #   the middle

    def __post_init__(self):
        assert self.num_heads % self.num_kv_heads == 0, "num_heads must be a multiple of num_kv_heads"
        assert self.head_dim % 2 == 0, "rotary embeddings need an even head_dim"
        assert 0 <= self.mask_token_id < self.vocab_size, "mask_token_id outside the vocabulary"
        assert self.edit_canvas in ("", "shown", "masked"), "edit_canvas must be '', 'shown' or 'masked'"

    def regions_context(self) -> int:
        """Tokens the canvas of a job of several holes may take: the context, or for a model
        trained on edit canvases (which lays such jobs out as one) their window, as trained."""
        if self.edit_canvas and self.edit_context:
            return min(self.edit_context, self.max_position_embeddings)
        return self.max_position_embeddings

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> "ModelConfig":
        raw = json.loads(Path(path).read_text())
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})

    def num_params(self) -> int:
        d, f, v = self.hidden_size, self.intermediate_size, self.vocab_size
        q, kv = self.num_heads * self.head_dim, self.num_kv_heads * self.head_dim
        per_layer = d * q + 2 * d * kv + q * d + 3 * d * f + 2 * d
        return v * d * (1 if self.tie_word_embeddings else 2) + self.num_layers * per_layer + d


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotary(positions: torch.Tensor, head_dim: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin of shape (B, 1, T, hd) for integer positions (B, T)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=positions.device).float() / head_dim))
    angles = positions.float()[..., None] * inv_freq  # (B, T, hd/2)
    angles = torch.cat([angles, angles], dim=-1)  # (B, T, hd)
    return angles.cos()[:, None], angles.sin()[:, None]


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return (x * cos + rotated * sin).to(x.dtype)


def grouped_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Bidirectional attention of queries (B, nh, Q, hd) to keys and values (B, nkv, S, hd) shared by
    groups of nh / nkv heads, under `mask` (B, 1, Q or 1, S) or none: each group's queries are
    laid as rows of one head (B, nkv, g * Q, hd), so that the keys and values are not repeated per
    head (1.07-1.2x faster than `enable_gqa` on the CPU). Outputs (B, nh, Q, hd)."""
    B, nh, Q, hd = q.shape
    groups = nh // k.shape[1]
    if groups == 1:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    if mask is not None and mask.shape[2] > 1:
        mask = mask.repeat(1, 1, groups, 1)  # (B, 1, g * Q, S): row j * Q + t is query t's
    y = F.scaled_dot_product_attention(q.reshape(B, nh // groups, groups * Q, hd), k, v, attn_mask=mask)
    return y.view(B, nh, Q, hd)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        d, hd = cfg.hidden_size, cfg.head_dim
        self.q_proj = nn.Linear(d, cfg.num_heads * hd, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(d, cfg.num_kv_heads * hd, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(d, cfg.num_kv_heads * hd, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(cfg.num_heads * hd, d, bias=False)
        if cfg.qk_norm:
            self.q_norm = RMSNorm(hd, cfg.rms_norm_eps)
            self.k_norm = RMSNorm(hd, cfg.rms_norm_eps)

    def forward(self, x, cos, sin, cache: KV | None, mask: torch.Tensor | None,
                queries: torch.Tensor | None = None, write_at: slice | torch.Tensor | None = None,
                ) -> tuple[torch.Tensor, KV]:
        """Outputs (B, Q, d) of the `queries` rows of x (all T when None) and the keys/values of all T.
        With `write_at` (T positions of `cache`) the keys/values of x are written there, in place, and
        the rows attend to the whole of `cache`: no copy of the cache, as appending to it would make."""
        cfg = self.cfg
        B, T, _ = x.shape
        if queries is not None:
            assert not cfg.causal, "query rows are a bidirectional model's shortcut"
            cos_q, sin_q = cos[:, :, queries], sin[:, :, queries]
            if mask is not None and mask.shape[2] > 1:  # a mask broadcast over the queries stays as it is
                mask = mask[:, :, queries]
        else:
            cos_q, sin_q = cos, sin
        q, k, v = self.project(x, queries)
        Q = q.shape[1]
        q = q.view(B, Q, cfg.num_heads, cfg.head_dim).transpose(1, 2)  # (B, nh, Q, hd)
        k = k.view(B, T, cfg.num_kv_heads, cfg.head_dim).transpose(1, 2)  # (B, nkv, T, hd)
        v = v.view(B, T, cfg.num_kv_heads, cfg.head_dim).transpose(1, 2)
        if cfg.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rotary(q, cos_q, sin_q), apply_rotary(k, cos, sin)
        new_kv = (k, v)
        if write_at is not None:
            cache[0][:, :, write_at], cache[1][:, :, write_at] = k, v
            k, v = cache  # (B, nkv, S, hd), these T among them
        elif cache is not None:
            k = torch.cat([cache[0], k], dim=2)  # (B, nkv, S+T, hd)
            v = torch.cat([cache[1], v], dim=2)
        if cfg.causal:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=cache is None and mask is None,
                                               enable_gqa=cfg.num_heads != cfg.num_kv_heads)  # (B, nh, Q, hd)
        else:
            y = grouped_attention(q, k, v, mask)
        return self.o_proj(y.transpose(1, 2).reshape(B, Q, -1)), new_kv

    def project(self, x: torch.Tensor, queries: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
        """Queries (B, Q, nh * hd) of the `queries` rows of x (all T when None); keys and values
        (B, T, nkv * hd) of all T."""
        x_q = x if queries is None else x[:, queries]
        return self.q_proj(x_q), self.k_proj(x), self.v_proj(x)


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, cache, mask, queries=None, write_at=None):
        h, kv = self.self_attn(self.input_layernorm(x), cos, sin, cache, mask, queries, write_at)
        x = (x if queries is None else x[:, queries]) + h
        return x + self.mlp(self.post_attention_layernorm(x)), kv


class Backbone(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class Transformer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.model = Backbone(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.apply(self._init)

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def hidden(
        self,
        input_ids: torch.Tensor,  # (B, T)
        positions: torch.Tensor | None = None,  # (B, T); default 0..T-1 after the cache
        cache: list[KV] | None = None,  # per layer, keys/values of S positions already encoded
        mask: torch.Tensor | None = None,  # bool (B, 1, T, S+T), True = may attend
        rows: torch.Tensor | None = None,  # (R,) indices into T: only these rows' hidden states are wanted
        write_at: slice | torch.Tensor | None = None,  # T positions of `cache` (B, nkv, S, hd) to write these in
    ) -> tuple[torch.Tensor, list[KV]]:
        """Final normed hidden states (B, T, d), or (B, R, d) of `rows`, and this call's keys/values
        per layer. With `rows` the last layer runs its queries, output projection and MLP for those
        rows alone: the other rows' keys/values are all later passes need of it. With `write_at` each
        layer writes its keys and values into `cache` there and attends to the whole of it
        (`Attention.forward`)."""
        B, T = input_ids.shape
        assert write_at is None or (cache is not None and positions is not None), "write_at places T rows in a cache"
        if positions is None:
            start = 0 if cache is None else cache[0][0].shape[2]
            positions = torch.arange(start, start + T, device=input_ids.device).expand(B, T)
        cos, sin = self._rotary(positions)
        x = self.model.embed_tokens(input_ids)
        new_cache = []
        last = len(self.model.layers) - 1
        for i, layer in enumerate(self.model.layers):
            x, kv = layer(x, cos, sin, None if cache is None else cache[i], mask, rows if i == last else None,
                          write_at)
            new_cache.append(kv)
        return self.model.norm(x), new_cache

    def forward(self, input_ids, positions=None, cache=None, mask=None) -> tuple[torch.Tensor, list[KV]]:
        """Raw logits (B, T, V) at each input position, and this call's keys/values per layer.

        With `logits_shift`, the logits at position i are the model's guess for position i+1:
        use `token_logits` to read the guess for each position itself.
        """
        h, new_cache = self.hidden(input_ids, positions, cache, mask)
        return self.lm_head(h), new_cache

    def moved(self, kv: list[KV], delta: int) -> list[KV]:
        """Keys/values per layer (B, nkv, S, hd) encoded at positions p, moved to p + delta: rotary
        keys turn by delta's angles (rotations compose); values carry no position."""
        if delta == 0:
            return kv
        cos, sin = self._rotary(torch.tensor([[delta]], device=kv[0][0].device))
        return [(apply_rotary(k, cos, sin), v) for k, v in kv]

    def _rotary(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """cos, sin for `positions`: fp32, or in the weights' dtype where the family's reference
        casts them (transformers' Qwen2 and Qwen3 rotary embeddings return `cos.to(x.dtype)`;
        LLaDA's keeps them in full precision, `rope_full_precision`)."""
        cos, sin = rotary(positions, self.cfg.head_dim, self.cfg.rope_theta)
        if self.cfg.rope_in_model_dtype:
            dtype = self.model.embed_tokens.weight.dtype
            if dtype.is_floating_point:  # an int8 store keeps its own float compute dtype elsewhere
                cos, sin = cos.to(dtype), sin.to(dtype)
        return cos, sin

    def token_logits(self, logits: torch.Tensor) -> torch.Tensor:
        """Logits that predict each position's own token (B, T, V), undoing the shift if any."""
        if not self.cfg.logits_shift:
            return logits
        return torch.cat([logits[:, :1], logits[:, :-1]], dim=1)

    def predictor_index(self, index: torch.Tensor) -> torch.Tensor:
        """The sequence index whose output predicts the token at `index` (index - 1 when shifted)."""
        return (index - 1).clamp(min=0) if self.cfg.logits_shift else index
