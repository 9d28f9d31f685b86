"""Repro: our "stable" softplus drifts from F.softplus on the tabular model's inputs.

The risk head uses a hand-written softplus that switches to the identity for large
inputs, to avoid overflow in exp().  After the last refactor the parity check in
CI fails on some batches and not others.  Trimmed from models/risk.py and
tests/test_activations.py; the check is seeded with the seed CI uses, so that it fails every time here.
CPU only, no arguments needed.
"""
import argparse
import logging
import math
import sys
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("risk.activations")


@dataclass
class HeadConfig:
    features: int = 96
    hidden: int = 192
    batch: int = 48
    # The parity check runs on a few rows of the feature width's first columns.
    probe_rows: int = 2
    probe_cols: int = 4
    # Above this, softplus(x) == x to float32 precision.
    threshold: float = 2.0
    atol: float = 1e-4


def stable_softplus(x: torch.Tensor, threshold: float) -> torch.Tensor:
    """log(1 + exp(x)), but the identity where exp(x) would overflow."""
    soft = torch.log1p(torch.exp(x))
    return torch.where(x > threshold, x, soft)


class StableSoftplus(nn.Module):
    def __init__(self, threshold: float):
        super().__init__()
        self.threshold = threshold

    def forward(self, x):
        return stable_softplus(x, self.threshold)


class RiskHead(nn.Module):
    def __init__(self, cfg: HeadConfig):
        super().__init__()
        self.norm = nn.LayerNorm(cfg.features)
        self.proj = nn.Linear(cfg.features, cfg.hidden)
        self.act = StableSoftplus(cfg.threshold)
        self.out = nn.Linear(cfg.hidden, 1)

    def forward(self, x):
        return self.out(self.act(self.proj(self.norm(x))))


def summarize(name: str, a: torch.Tensor, b: torch.Tensor) -> str:
    diff = (a - b).abs()
    worst = diff.argmax().item()
    return (
        f"{name}: max abs diff {diff.max().item():.3e} at {worst} "
        f"(ours {a.flatten()[worst].item():.4f}, ref {b.flatten()[worst].item():.4f})"
    )


def check_activation(cfg: HeadConfig) -> None:
    """The parity check: our activation against torch's on a random batch."""
    act = StableSoftplus(cfg.threshold)
    x = torch.randn(cfg.probe_rows, cfg.probe_cols)
    ours = act(x)
    ref = F.softplus(x)
    log.info(summarize("softplus", ours, ref))
    assert torch.allclose(ours, ref, atol=cfg.atol), "softplus mismatch: " + summarize(
        "softplus", ours, ref
    )


def check_head_shapes(head: RiskHead, cfg: HeadConfig) -> None:
    x = torch.randn(cfg.batch, cfg.features)
    y = head(x)
    assert y.shape == (cfg.batch, 1), y.shape
    assert torch.isfinite(y).all()


def expected_overflow_point() -> float:
    # exp overflows float32 a little above 88.7
    return math.log(torch.finfo(torch.float32).max)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="activation parity check")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    cfg = HeadConfig()
    log.info("overflow point %.1f, threshold %.1f", expected_overflow_point(), cfg.threshold)
    torch.manual_seed(args.seed)
    head = RiskHead(cfg)
    n_params = sum(p.numel() for p in head.parameters())
    log.info("risk head with %d parameters", n_params)
    check_activation(cfg)
    check_head_shapes(head, cfg)
    print("activations ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
