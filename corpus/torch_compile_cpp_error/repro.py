"""Train a small tabular classifier with torch.compile; the first step fails to build."""
import argparse
import logging
import math
import os
import random
import time

import torch
import torch.nn as nn
import torch._inductor.config as inductor_config

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("train")

# Inductor settings we were bisecting over when the build broke.
inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
inductor_config.fallback_random = True


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return p.parse_args([])


class Block(nn.Module):
    def __init__(self, width, dropout=0.0):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.drop(torch.relu(self.fc(self.norm(x))))


class Classifier(nn.Module):
    def __init__(self, features, hidden, classes, depth=2):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.blocks = nn.Sequential(*[Block(hidden) for _ in range(depth)])
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.blocks(torch.relu(self.inp(x))))


def batches(args, n):
    g = torch.Generator().manual_seed(args.seed)
    for _ in range(n):
        x = torch.randn(args.batch, args.features, generator=g)
        y = torch.randint(0, args.classes, (args.batch,), generator=g)
        yield x.to(args.device), y.to(args.device)


def main():
    args = parse_args()
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    model = Classifier(args.features, args.hidden, args.classes).to(args.device)
    log.info("parameters: %d", sum(p.numel() for p in model.parameters()))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    compiled = torch.compile(model)
    start = time.time()
    for step, (x, y) in enumerate(batches(args, args.steps)):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(compiled(x), y)
        loss.backward()
        opt.step()
        if step % 5 == 0:
            log.info("step %d loss %.4f ppl %.2f", step, loss.item(), math.exp(loss.item()))
    log.info("done in %.1fs (pid %d)", time.time() - start, os.getpid())


if __name__ == "__main__":
    main()
