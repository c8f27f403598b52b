"""Many requests' hole windows in one forward pass (pure torch; no decoding rules here).

Each request brings the token ids of its window (the positions a denoising step runs), their
positions on its canvas, and the cached keys/values of its context (every position outside the
window). Windows are padded to the longest window and contexts to the longest context; a boolean
key mask hides the padding, so each request attends to its own context and window only. When all
lengths agree there is no padding and no mask, and a batch of one is exactly the unbatched pass.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from infill.model import KV, Transformer


def pad_right(rows: list[torch.Tensor], length: int, value: int = 0) -> torch.Tensor:
    """Stack 1-D tensors (T_i,) into (B, length), padding each on the right with `value`."""
    return torch.stack([F.pad(r, (0, length - len(r)), value=value) for r in rows])


def pad_contexts(contexts: list[list[KV]], length: int) -> list[KV]:
    """Per layer, the requests' keys/values (1, nkv, S_i, hd) padded and stacked to (B, nkv, length, hd)."""
    def stack(tensors: list[torch.Tensor]) -> torch.Tensor:
        if len(tensors) == 1 and tensors[0].shape[2] == length:
            return tensors[0]  # nothing to pad or stack: no copy of a context that may be megabytes
        return torch.cat([F.pad(t, (0, 0, 0, length - t.shape[2])) for t in tensors])  # (B, nkv, length, hd)

    layers = zip(*contexts)  # per layer: one (k, v) per request
    return [(stack([k for k, _ in kvs]), stack([v for _, v in kvs])) for kvs in layers]


def key_mask(context_lens: list[int], window_lens: list[int], device: torch.device | str = "cpu") -> torch.Tensor:
    """Which keys each request may attend to (B, 1, 1, S + W): its own context and window, not the padding."""
    S, W = max(context_lens), max(window_lens)
    context = torch.arange(S, device=device)[None] < torch.tensor(context_lens, device=device)[:, None]  # (B, S)
    window = torch.arange(W, device=device)[None] < torch.tensor(window_lens, device=device)[:, None]  # (B, W)
    return torch.cat([context, window], dim=1)[:, None, None]  # (B, 1, 1, S + W)


def row_masks(base: torch.Tensor, masks: list[torch.Tensor | None], context_lens: list[int],
              window_lens: list[int]) -> torch.Tensor:
    """The key mask (B, 1, W, S + W) with request b's own mask (W_b, S_b + W_b), where given, laid
    over its rows: its context's columns first, then its window's after the padded context."""
    full = base.clone()
    S = base.shape[3] - base.shape[2]
    for b, mask in enumerate(masks):
        if mask is not None:
            s, w = context_lens[b], window_lens[b]
            full[b, 0, :w, :s] = mask[:, :s]
            full[b, 0, :w, S:S + w] = mask[:, s:]
    return full


def batch_window_pass(model: Transformer, windows: list[torch.Tensor], positions: list[torch.Tensor],
                      contexts: list[list[KV]], masks: list[torch.Tensor | None] | None = None,
                      ) -> tuple[list[torch.Tensor], list[KV]]:
    """Hidden states (W_i, d) of each request's window (W_i,) at its positions (W_i,), in one
    forward; and the windows' keys/values per layer (B, nkv, W, hd), request b's in row b, its
    first W_i positions. `masks`: per request None (each row sees its context and window) or which
    of them each of its rows sees (W_i, S_i + W_i)."""
    window_lens = [len(w) for w in windows]
    context_lens = [ctx[0][0].shape[2] for ctx in contexts]
    W, S = max(window_lens), max(context_lens)
    ids = pad_right(windows, W)  # (B, W)
    pos = pad_right(positions, W)  # (B, W); padded rows are masked out as keys and dropped as queries
    cache = pad_contexts(contexts, S)
    ragged = len(set(window_lens)) > 1 or len(set(context_lens)) > 1
    own = masks is not None and any(mask is not None for mask in masks)
    mask = None
    if ragged or own:
        mask = key_mask(context_lens, window_lens, ids.device).expand(-1, 1, W, -1)  # (B, 1, W, S + W)
    if own:
        mask = row_masks(mask, masks, context_lens, window_lens)
    h, kv = model.hidden(ids, positions=pos, cache=cache, mask=mask)  # (B, W, d); per layer (B, nkv, W, hd)
    return [h[b, :n] for b, n in enumerate(window_lens)], kv
