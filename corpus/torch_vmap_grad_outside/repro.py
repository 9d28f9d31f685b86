"""Per-sample gradient clipping (DP-SGD) crashes under torch.func.vmap.

Following the per-sample-gradients recipe, we compute the per-example losses once
with a normal batched forward (we need them for logging anyway) and then vmap a
small function that takes one loss and returns its gradient norm.  The vmapped
call raises "element 0 of tensors does not require grad", although every loss
clearly has a grad_fn when printed outside vmap.  Trimmed from dp_train.py;
CPU only, no arguments needed.
"""
import argparse
import logging
import math
import sys
from dataclasses import dataclass
from typing import Dict, List

import torch
import torch.nn as nn
from torch.func import vmap

log = logging.getLogger("dp_train")


@dataclass
class PrivacyConfig:
    features: int = 10
    classes: int = 3
    batch: int = 8
    clip_norm: float = 1.0
    noise_multiplier: float = 1.1
    lr: float = 0.1
    steps: int = 2
    seed: int = 5


def make_batch(cfg: PrivacyConfig, step: int):
    gen = torch.Generator().manual_seed(cfg.seed * 100 + step)
    x = torch.randn(cfg.batch, cfg.features, generator=gen)
    y = torch.randint(0, cfg.classes, (cfg.batch,), generator=gen)
    return x, y


def per_sample_losses(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    logits = model(x)
    return nn.functional.cross_entropy(logits, y, reduction="none")


def grad_norms_loop(losses: torch.Tensor, params: List[torch.Tensor]) -> torch.Tensor:
    """Reference implementation: one autograd.grad per example (slow, but correct)."""
    norms = []
    for loss in losses:
        grads = torch.autograd.grad(loss, params, retain_graph=True)
        norms.append(torch.sqrt(sum((g ** 2).sum() for g in grads)))
    return torch.stack(norms)


def grad_norms_vmap(losses: torch.Tensor, params: List[torch.Tensor]) -> torch.Tensor:
    def one(loss: torch.Tensor) -> torch.Tensor:
        grads = torch.autograd.grad(loss, params, retain_graph=True)
        return torch.sqrt(sum((g ** 2).sum() for g in grads))

    return vmap(one)(losses)


def clip_factors(norms: torch.Tensor, clip_norm: float) -> torch.Tensor:
    return torch.clamp(clip_norm / (norms + 1e-6), max=1.0)


def noisy_step(model: nn.Module, losses: torch.Tensor, factors: torch.Tensor, cfg: PrivacyConfig) -> None:
    model.zero_grad()
    (losses * factors.detach()).sum().backward()
    with torch.no_grad():
        for p in model.parameters():
            noise = torch.randn_like(p) * cfg.noise_multiplier * cfg.clip_norm
            p -= cfg.lr * (p.grad + noise) / cfg.batch


def epsilon_estimate(cfg: PrivacyConfig, steps: int) -> float:
    # crude moments-accountant stand-in, only logged
    q = cfg.batch / 60000
    return q * math.sqrt(steps * math.log(1e5)) / cfg.noise_multiplier


def train(cfg: PrivacyConfig, use_vmap: bool) -> Dict[str, float]:
    torch.manual_seed(cfg.seed)
    model = nn.Sequential(nn.Linear(cfg.features, 16), nn.Tanh(), nn.Linear(16, cfg.classes))
    params = [p for p in model.parameters() if p.requires_grad]
    stats = {}
    for step in range(cfg.steps):
        x, y = make_batch(cfg, step)
        losses = per_sample_losses(model, x, y)
        log.debug("step %d losses %s grad_fn=%s", step, losses.tolist(), losses.grad_fn)
        if use_vmap:
            norms = grad_norms_vmap(losses, params)
        else:
            norms = grad_norms_loop(losses, params)
        factors = clip_factors(norms, cfg.clip_norm)
        noisy_step(model, losses, factors, cfg)
        stats["step%d_mean_norm" % step] = norms.mean().item()
    stats["epsilon"] = epsilon_estimate(cfg, cfg.steps)
    return stats


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="DP-SGD toy trainer")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--loop", action="store_true", help="per-example loop instead of vmap")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s [%(levelname)s] %(message)s")
    cfg = PrivacyConfig(batch=args.batch, steps=args.steps, clip_norm=args.clip)
    log.info("config: %s", cfg)
    stats = train(cfg, use_vmap=not args.loop)
    for key, value in sorted(stats.items()):
        print("%s=%.4f" % (key, value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
