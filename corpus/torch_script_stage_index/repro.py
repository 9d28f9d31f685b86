"""Exporting the two-stage denoiser to TorchScript for the C++ runtime fails.

Eager inference is fine (see the shape check below). The exporter picks the
stage to run through a small list, because the encoder/decoder pair may be
swapped by the `--reverse` flag in the training code.
"""
import argparse
import logging
from dataclasses import dataclass

import torch
import torch.nn as nn

log = logging.getLogger("denoise.export")


@dataclass
class StageConfig:
    channels: int = 16
    depth: int = 3
    dropout: float = 0.1


class Stage(nn.Module):
    def __init__(self, cfg: StageConfig):
        super().__init__()
        self.mods = nn.ModuleList(
            [nn.Linear(cfg.channels, cfg.channels) for _ in range(cfg.depth)]
        )
        self.norm = nn.LayerNorm(cfg.channels)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.norm(x))


class Denoiser(nn.Module):
    def __init__(self, cfg: StageConfig):
        super().__init__()
        self.encoder = Stage(cfg)
        self.decoder = Stage(cfg)
        self.head = nn.Linear(cfg.channels, 1)

    def forward(self, x):
        stages = [self.encoder, self.decoder]
        for layer in stages[1].mods:
            x = torch.relu(layer(x))
        return self.head(x)


def count_parameters(model):
    """Trainable parameters, as the export log reports them."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def describe(model, cfg):
    stages = ", ".join(name for name, _ in model.named_children())
    log.info("denoiser: %d parameters, stages %s, depth %d", count_parameters(model), stages, cfg.depth)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="export the denoiser")
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--out", default="denoiser.pt")
    return parser.parse_args(argv)


def main():
    args = parse_args([])
    logging.basicConfig(level=logging.INFO)
    cfg = StageConfig(channels=args.channels, depth=args.depth)
    model = Denoiser(cfg).eval()
    describe(model, cfg)
    batch = torch.randn(2, cfg.channels)
    with torch.no_grad():
        out = model(batch)
    log.info("eager output %s", tuple(out.shape))
    assert out.shape == (2, 1)
    scripted = torch.jit.script(model)
    scripted.save(args.out)
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
