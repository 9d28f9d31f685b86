"""Repro: torch.compile(fullgraph=True) of our gated router fails even with backend="eager".

We compile the mixture-of-experts router of a small speech model.  With
--fullgraph the compile aborts, whatever --backend we pass (inductor, aot_eager,
eager), so it is not an inductor problem.  Eager mode (--no-compile) runs fine.
Trimmed copy of router.py and its smoke test; CPU only, no arguments needed.
"""
import argparse
import logging
import math
import os
import sys
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("router.smoke")


@dataclass
class RouterConfig:
    d_model: int = 64
    n_experts: int = 4
    top_k: int = 2
    capacity_factor: float = 1.25
    jitter: float = 0.0
    seed: int = 1234


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="router smoke test")
    parser.add_argument("--backend", default="eager", help="torch.compile backend")
    parser.add_argument("--fullgraph", action="store_true", default=True)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args(argv)


class Expert(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        self.up = nn.Linear(d_model, 2 * d_model)
        self.down = nn.Linear(2 * d_model, d_model)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class GatedRouter(nn.Module):
    def __init__(self, cfg: RouterConfig):
        super().__init__()
        self.cfg = cfg
        self.gate = nn.Linear(cfg.d_model, cfg.n_experts, bias=False)
        self.experts = nn.ModuleList(Expert(cfg.d_model) for _ in range(cfg.n_experts))

    def forward(self, x):
        logits = self.gate(x)
        if self.cfg.jitter > 0:
            logits = logits + torch.randn_like(logits) * self.cfg.jitter
        probs = logits.softmax(dim=-1)
        # Skip the routing when no token is confident: a shortcut from the paper.
        if probs.max() < 1.0 / self.cfg.n_experts:
            return x
        weights, index = probs.topk(self.cfg.top_k, dim=-1)
        out = torch.zeros_like(x)
        for k in range(self.cfg.top_k):
            for e, expert in enumerate(self.experts):
                mask = (index[:, k] == e).unsqueeze(-1)
                out = out + mask * weights[:, k : k + 1] * expert(x)
        return out


def capacity(cfg: RouterConfig, tokens: int) -> int:
    return int(math.ceil(tokens * cfg.top_k * cfg.capacity_factor / cfg.n_experts))


def build(cfg: RouterConfig, args):
    torch.manual_seed(cfg.seed)
    model = GatedRouter(cfg).eval()
    if args.no_compile:
        return model, model
    compiled = torch.compile(model, backend=args.backend, fullgraph=args.fullgraph)
    return model, compiled


def smoke(cfg: RouterConfig, args) -> None:
    model, compiled = build(cfg, args)
    for step in range(args.steps):
        x = torch.randn(args.batch, cfg.d_model)
        start = time.perf_counter()
        with torch.no_grad():
            out = compiled(x)
        log.info("step %d: %.1f ms, capacity %d", step, 1e3 * (time.perf_counter() - start), capacity(cfg, args.batch))
        if out.shape != x.shape:
            raise RuntimeError(f"router changed the shape: {tuple(out.shape)}")


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = RouterConfig()
    log.info("torch %s, backend %s, fullgraph %s", torch.__version__, args.backend, args.fullgraph)
    smoke(cfg, args)
    print("router smoke test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
