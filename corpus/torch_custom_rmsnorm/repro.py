"""Repro: our fused RMSNorm disagrees with torch's F.rms_norm.

We replaced F.rms_norm with a hand-fused version in the decoder blocks to save a
kernel launch.  The parity test against torch's reference now fails for every
shape and dtype we try.  This is the kernel, the module wrapper and the parity
test, trimmed from ops/norms.py and tests/test_norms.py; CPU, no arguments.
"""
import argparse
import itertools
import logging
import sys
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("ops.norms")

SHAPES = [(4, 128), (2, 16, 128), (3, 7, 256)]
DTYPES = [torch.float32, torch.float64]
EPS = 1e-6


def fused_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """One pass over x: the mean square and the scaling together."""
    d = x.shape[-1]
    # Sum of squares over the last dim, divided by the number of elements.
    mean_square = x.pow(2).sum(dim=-1, keepdim=True) / (d - 1)
    return x * torch.rsqrt(mean_square + eps) * weight


class FusedRMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return fused_rms_norm(x, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"


def describe(a: torch.Tensor, b: torch.Tensor) -> str:
    diff = (a - b).abs()
    return f"max abs diff {diff.max().item():.3e}, mean {diff.mean().item():.3e}"


class TestFusedRMSNorm(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def test_matches_reference(self):
        for shape, dtype in itertools.product(SHAPES, DTYPES):
            with self.subTest(shape=shape, dtype=dtype):
                norm = FusedRMSNorm(shape[-1]).to(dtype)
                with torch.no_grad():
                    norm.weight.uniform_(0.5, 1.5)
                x = torch.randn(*shape, dtype=dtype)
                fast = norm(x)
                ref = F.rms_norm(x, (shape[-1],), norm.weight, norm.eps)
                log.debug("%s %s: %s", shape, dtype, describe(ref, fast))
                assert torch.allclose(ref, fast, rtol=1e-4, atol=1e-5), (
                    f"fused RMSNorm output mismatch for {shape} {dtype}: {describe(ref, fast)}"
                )

    def test_gradients_flow(self):
        norm = FusedRMSNorm(8)
        x = torch.randn(2, 8, requires_grad=True)
        norm(x).sum().backward()
        self.assertIsNotNone(x.grad)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="RMSNorm parity test")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    suite = unittest.TestSuite()
    suite.addTest(TestFusedRMSNorm("test_matches_reference"))
    suite.addTest(TestFusedRMSNorm("test_gradients_flow"))
    for test in suite:
        test.setUp()
        getattr(test, test._testMethodName)()
    print("parity ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
