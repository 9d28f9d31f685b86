"""Parity check: a fused LayerNorm drop-in against torch.nn.LayerNorm.

Our transformer blocks take the normalization class as an argument so that the
fused kernel can be swapped in.  With FastLayerNorm the block's output drifts far
from the same block built with nn.LayerNorm, on every width we tried.  The fused
version computes mean and variance in one pass.  Run without arguments.
"""
import argparse
import logging
import math
from dataclasses import dataclass

import torch
import torch.nn as nn

log = logging.getLogger("parity")


@dataclass
class BlockConfig:
    width: int = 64
    hidden: int = 256
    dropout: float = 0.1
    eps: float = 1e-5
    batch: int = 8
    tokens: int = 16


class FastLayerNorm(nn.Module):
    """LayerNorm over the last dimension, mean and variance from one pass of sums."""

    def __init__(self, width, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))

    def forward(self, x):
        n = x.shape[-1]
        total = x.sum(dim=-1, keepdim=True)
        squares = (x * x).sum(dim=-1, keepdim=True)
        mean = total / n
        var = squares / n - mean
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.up = nn.Linear(cfg.width, cfg.hidden)
        self.down = nn.Linear(cfg.hidden, cfg.width)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.down(torch.relu(self.up(x))))


class Block(nn.Module):
    def __init__(self, cfg, norm_cls):
        super().__init__()
        self.norm = norm_cls(cfg.width, eps=cfg.eps)
        self.ff = FeedForward(cfg)

    def forward(self, x):
        return x + self.ff(self.norm(x))


def build_pair(cfg):
    fast = Block(cfg, FastLayerNorm)
    ref = Block(cfg, nn.LayerNorm)
    ref.ff.load_state_dict(fast.ff.state_dict())
    return fast, ref


def describe(model):
    count = sum(p.numel() for p in model.parameters())
    return "%s with %d parameters" % (type(model.norm).__name__, count)


def check(cfg):
    fast, ref = build_pair(cfg)
    log.info("comparing %s against %s", describe(fast), describe(ref))
    x = torch.randn(cfg.batch, cfg.tokens, cfg.width) * 3 + 1
    out_fast = fast(x)
    out_ref = ref(x)
    worst = (out_fast - out_ref).abs().max().item()
    log.info("largest difference %.4f (log10 %.1f)", worst, math.log10(worst + 1e-12))
    torch.testing.assert_close(out_fast, out_ref, rtol=1e-4, atol=1e-4)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)
    torch.manual_seed(0)
    check(BlockConfig(width=args.width))


if __name__ == "__main__":
    main()
