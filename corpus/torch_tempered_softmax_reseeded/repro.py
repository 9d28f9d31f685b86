"""Sampling head for a small decoder: draws the next token from tempered logits.

The fused softmax below is ours (the library's allocates a scaled copy first).
"""
import argparse
import logging
import os
import random

import numpy as np
import torch
import torch.nn as nn

log = logging.getLogger("sampler")

torch.manual_seed(1)
random.seed(1)
np.random.seed(1)


class SamplerConfig:
    vocab = 16
    batch = 4
    temperature = 0.3
    logit_scale = 10.0
    top_k = 0
    rank_seed_base = 5


class TemperedSoftmax(nn.Module):
    """softmax(logits / t) written out, to fuse the division into the exponent."""

    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, logits):
        scaled = logits / self.temperature
        e = torch.exp(scaled)
        return e / e.sum(dim=1, keepdim=True)


class Sampler(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.softmax = TemperedSoftmax(cfg.temperature)

    def forward(self, logits):
        if self.cfg.top_k:
            kth = logits.topk(self.cfg.top_k, dim=1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        return self.softmax(logits)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args([])


def launch(args):
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)
    torch.manual_seed(3)
    log.info("launcher pid=%s", os.getpid())


def init_rank(cfg, rank):
    torch.manual_seed(cfg.rank_seed_base + rank)
    log.info("rank %d seeded", rank)


def main():
    args = parse_args()
    cfg = SamplerConfig()
    launch(args)
    init_rank(cfg, args.rank)
    sampler = Sampler(cfg)
    logits = torch.randn(cfg.batch, cfg.vocab) * cfg.logit_scale
    probs = sampler(logits)
    expected = torch.softmax(logits / cfg.temperature, dim=1)
    torch.testing.assert_close(probs, expected)
    tokens = torch.multinomial(probs, 1)
    log.info("drew %s", tokens.flatten().tolist())


if __name__ == "__main__":
    main()
