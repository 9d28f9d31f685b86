"""Repro: the speech encoder's own LayerNorm disagrees with nn.LayerNorm.

We keep a hand-written LayerNorm in the encoder so that the export to our
inference runtime sees plain ops.  The new parity test fails on every machine
we tried, GPU or not.  The norm, the block that uses it and the test are copied
from encoder/layers.py and tests/test_layers.py.  Runs on CUDA when there is
one, else on the CPU.
"""
import argparse
import logging
import sys
import time

import torch
import torch.nn as nn

log = logging.getLogger("encoder.layers")

device = "cuda" if torch.cuda.is_available() else "cpu"


class PlainLayerNorm(nn.Module):
    """LayerNorm over the last dim, written out so that export sees mean/var/rsqrt."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=0, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int, dropout: float):
        super().__init__()
        self.norm = PlainLayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.up(self.norm(x))
        return x + self.drop(self.down(torch.relu(h)))


def max_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


def parity(dim: int, frames: int, batch: int) -> None:
    torch.manual_seed(1234)
    ours = PlainLayerNorm(dim).to(device)
    ref = nn.LayerNorm(dim).to(device)
    x = torch.randn(batch, frames, dim, device=device) * 3.0 + 0.5
    with torch.no_grad():
        got = ours(x)
        want = ref(x)
    log.info("dim=%d frames=%d: max error %.2e", dim, frames, max_error(got, want))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def smoke_block(dim: int) -> None:
    block = FeedForward(dim, 4 * dim, dropout=0.1).to(device).eval()
    x = torch.randn(2, 10, dim, device=device)
    start = time.perf_counter()
    with torch.no_grad():
        y = block(x)
    log.info("block forward in %.1f ms", 1000 * (time.perf_counter() - start))
    assert y.shape == x.shape


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="LayerNorm parity test")
    parser.add_argument("--dims", type=int, nargs="+", default=[80, 256])
    parser.add_argument("--frames", type=int, default=50)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    log.info("running on %s", device)
    for dim in args.dims:
        smoke_block(dim)
        parity(dim, args.frames, args.batch)
    print("layer norm parity ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
