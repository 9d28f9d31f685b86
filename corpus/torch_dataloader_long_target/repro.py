"""Churn regression: training dies on the first backward pass.

The labels used to be churn probabilities; the warehouse export now ships the
number of cancelled months (an integer count) and nobody touched the loader.

Run: python train_churn.py --epochs 3 --batch-size 32
"""
import argparse
import logging
import math
import os
import random
import time
from dataclasses import dataclass, field
from typing import List

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
log = logging.getLogger("churn")


@dataclass
class TrainConfig:
    features: int = 24
    hidden: int = 256
    layers: int = 3
    batch_size: int = 32
    epochs: int = 3
    lr: float = 3e-4
    weight_decay: float = 0.01
    seed: int = 7
    columns: List[str] = field(default_factory=lambda: ["tenure", "plan", "region"])


def parse_args() -> TrainConfig:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    a = p.parse_args()
    return TrainConfig(epochs=a.epochs, batch_size=a.batch_size, lr=a.lr)


def seed_all(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


def export_rows(n: int, features: int):
    """Stands in for the warehouse export: float features, integer month counts."""
    x = torch.randn(n, features)
    months = torch.randint(0, 12, (n,))
    return x, months


class MLP(nn.Module):
    def __init__(self, features: int, hidden: int, layers: int):
        super().__init__()
        dims = [features] + [hidden] * layers
        self.body = nn.Sequential(
            *[nn.Sequential(nn.Linear(a, b), nn.ReLU()) for a, b in zip(dims, dims[1:])]
        )
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(-1)


def cosine_lr(step: int, total: int, base: float) -> float:
    return base * 0.5 * (1 + math.cos(math.pi * step / max(total, 1)))


def train(cfg: TrainConfig) -> float:
    x, y = export_rows(512, cfg.features)
    loader = DataLoader(TensorDataset(x, y), batch_size=cfg.batch_size, shuffle=True)
    model = MLP(cfg.features, cfg.hidden, cfg.layers)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loss_fn = nn.HuberLoss(delta=2.0)
    total = cfg.epochs * len(loader)
    step = 0
    last = float("nan")
    for epoch in range(cfg.epochs):
        start = time.time()
        model.train()
        for i, (xb, yb) in enumerate(loader):
            for group in opt.param_groups:
                group["lr"] = cosine_lr(step, total, cfg.lr)
            pred = model(xb)
            loss = loss_fn(pred, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            last = loss.item()
            step += 1
            if i % 10 == 0:
                log.info("epoch %d step %d loss %.4f", epoch, i, last)
        log.info("epoch %d took %.2fs", epoch, time.time() - start)
    return last


def main() -> None:
    cfg = parse_args()
    seed_all(cfg.seed)
    log.info("config: %s", cfg)
    final = train(cfg)
    print(f"final loss {final:.4f}")


if __name__ == "__main__":
    main()
