"""Compiling our scorer with fullgraph=True fails on the first batch.

The eager model runs fine. We keep the eager outputs around to compare with the compiled
ones once compilation works. PyTorch 2.15, CPU.
"""
import argparse
import logging
import os
from dataclasses import dataclass

import torch
import torch.nn as nn

log = logging.getLogger("scorer")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
os.environ.setdefault("OMP_NUM_THREADS", "4")


@dataclass
class ScorerConfig:
    features: int = 64
    hidden: int = 128
    batch: int = 16
    clip: float = 5.0


def parse_args():
    parser = argparse.ArgumentParser(description="score a batch with a compiled model")
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--backend", default="inductor")
    return parser.parse_args([])


class Scorer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encode = nn.Linear(cfg.features, cfg.hidden)
        self.head = nn.Linear(cfg.hidden, 1)
        self.clip = cfg.clip

    def forward(self, feats):
        h = torch.tanh(self.encode(feats))
        # Rescale only when the activations drifted: reads the value on the host.
        if h.abs().max().item() > 0.5:
            h = h / self.clip
        return self.head(h).squeeze(-1)


def make_batch(cfg):
    feats = torch.randn(cfg.batch, cfg.features)
    labels = torch.randint(0, 2, (cfg.batch,)).float()
    return feats, labels


def report(name, scores):
    log.info("%s: mean %.4f std %.4f", name, scores.mean().item(), scores.std().item())


def main():
    args = parse_args()
    cfg = ScorerConfig(features=args.features, hidden=args.hidden, batch=args.batch)
    torch.manual_seed(0)
    model = Scorer(cfg).eval()
    feats, labels = make_batch(cfg)

    with torch.no_grad():
        expected = model(feats)
    report("eager", expected)

    compiled = torch.compile(model, backend=args.backend, fullgraph=True)
    model = compiled
    with torch.no_grad():
        actual = model(feats)
    report("compiled", actual)

    loss = nn.functional.binary_cross_entropy_with_logits(actual, labels)
    log.info("loss %.4f", loss.item())
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)
    print("compiled matches eager")


if __name__ == "__main__":
    main()
