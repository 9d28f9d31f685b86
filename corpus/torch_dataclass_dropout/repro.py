"""Image denoiser: model construction fails after the config refactor.

Hyper-parameters moved from argparse into a dataclass.  The old CLI took the
dropout as a percentage (`--dropout 15`); the dataclass wants a probability,
and the conversion in `from_cli` divides the wrong field.

    python denoise.py --dropout 15 --epochs 1
"""
import argparse
import logging
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
log = logging.getLogger("denoise")


@dataclass
class DenoiserConfig:
    channels: int = 3
    width: int = 32
    depth: int = 4
    kernel: int = 3
    dropout: float = 0.1
    noise_std: float = 0.2
    lr: float = 2e-3
    epochs: int = 2
    image_size: Tuple[int, int] = (32, 32)
    tags: list = field(default_factory=lambda: ["refactor"])

    @classmethod
    def from_cli(cls, args):
        cfg = cls(epochs=args.epochs, lr=args.lr)
        # The CLI used percentages; scale what the model reads.
        cfg.noise_std = args.dropout / 100
        cfg.dropout = args.dropout / 10
        return cfg


class ConvBlock(nn.Module):
    def __init__(self, channels, kernel, dropout):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel, padding=kernel // 2)
        self.norm = nn.BatchNorm2d(channels)
        self.drop = nn.Dropout2d(dropout)

    def forward(self, x):
        return x + self.drop(F.relu(self.norm(self.conv(x))))


class Denoiser(nn.Module):
    def __init__(self, cfg: DenoiserConfig):
        super().__init__()
        self.inp = nn.Conv2d(cfg.channels, cfg.width, cfg.kernel, padding=cfg.kernel // 2)
        self.blocks = nn.Sequential(*[ConvBlock(cfg.width, cfg.kernel, cfg.dropout) for _ in range(cfg.depth)])
        self.out = nn.Conv2d(cfg.width, cfg.channels, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x)))


def synthetic_images(n, cfg):
    h, w = cfg.image_size
    yy, xx = torch.meshgrid(torch.linspace(0, 1, h), torch.linspace(0, 1, w), indexing="ij")
    base = torch.stack([torch.sin(6 * xx), torch.cos(6 * yy), xx * yy])
    return base.unsqueeze(0).repeat(n, 1, 1, 1)


def train(cfg):
    model = Denoiser(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    clean = synthetic_images(8, cfg)
    for epoch in range(cfg.epochs):
        noisy = clean + cfg.noise_std * torch.randn_like(clean)
        loss = F.mse_loss(model(noisy), clean)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("epoch %d loss %.4f", epoch, loss.item())
    return model


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--dropout", type=float, default=15)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--out", default=os.devnull)
    args = parser.parse_args(argv)
    cfg = DenoiserConfig.from_cli(args)
    log.info("config %s", asdict(cfg))
    torch.manual_seed(0)
    model = train(cfg)
    torch.save(model.state_dict(), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
