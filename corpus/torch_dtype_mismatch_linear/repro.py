"""Tabular regression: the training step crashes once batches come from the feature store.

Reported with: python train_tabular.py --epochs 2
"""
import argparse
import logging
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("tabular")


def parse_args():
    p = argparse.ArgumentParser(description="tabular regression")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--features", type=int, default=1024)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def select_device():
    if torch.cuda.is_available():
        device = torch.device("cuda:0")
        log.info("using %s", torch.cuda.get_device_name(0))
    else:
        log.warning("CUDA not available, falling back to CPU")
        device = torch.device("cpu")
    return device


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


class Block(nn.Module):
    def __init__(self, width, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.drop(F.gelu(self.fc(self.norm(x))))


class Regressor(nn.Module):
    def __init__(self, features, hidden, depth):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.blocks = nn.Sequential(*[Block(hidden) for _ in range(depth)])
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.inp(x)
        h = self.blocks(h)
        return self.head(h).squeeze(-1)


class FeatureStore:
    """Stands in for the service that serves feature rows as numpy arrays."""

    def __init__(self, features):
        self.features = features
        self.mean = np.zeros(features)
        self.std = np.ones(features)

    def batch(self, batch_size):
        rows = np.random.randn(batch_size, self.features)
        target = rows[:, :8].sum(axis=1)
        return (rows - self.mean) / self.std, target


def to_tensors(rows, target, device):
    x = torch.from_numpy(rows).to(device)
    y = torch.from_numpy(target).float().to(device)
    return x, y


def main():
    args = parse_args()
    seed_everything(args.seed)
    device = select_device()
    store = FeatureStore(args.features)
    model = Regressor(args.features, args.hidden, args.depth).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    log.info("model has %d parameters", sum(p.numel() for p in model.parameters()))
    for epoch in range(args.epochs):
        start = time.time()
        model.train()
        for step in range(4):
            x, y = to_tensors(*store.batch(args.batch_size), device)
            pred = model(x)
            loss = F.mse_loss(pred, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())
        log.info("epoch %d took %.2fs", epoch, time.time() - start)


if __name__ == "__main__":
    main()
