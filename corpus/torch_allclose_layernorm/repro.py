"""Fused LayerNorm kernel (reference Python version) disagrees with F.layer_norm.

The test below is a copy of test_fused_layernorm.py::test_matches_reference.
"""
import argparse
import itertools
import logging
import unittest
from dataclasses import dataclass
import time

import torch
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO)
LOG = logging.getLogger(__name__)

SHAPES = [(4, 1024), (16, 1024), (2, 8, 1024)]
DTYPES = [torch.float64, torch.float32]
EPS = 1e-5


@dataclass
class Tolerance:
    rtol: float
    atol: float


TOLERANCES = {
    torch.float64: Tolerance(rtol=1e-7, atol=1e-7),
    torch.float32: Tolerance(rtol=1.3e-6, atol=1e-5),
}


def describe(shape, dtype):
    tol = TOLERANCES[dtype]
    return f"shape={tuple(shape)} dtype={str(dtype).split('.')[-1]} rtol={tol.rtol} atol={tol.atol}"


def timed(fn, *args, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def fused_layer_norm(x, weight, bias, eps=EPS):
    mean = x.mean(dim=-1, keepdim=True)
    # Bug under investigation: unbiased variance instead of the population variance.
    var = x.var(dim=-1, keepdim=True, unbiased=True)
    y = (x - mean) / torch.sqrt(var + eps)
    return y * weight + bias


def reference_layer_norm(x, weight, bias, eps=EPS):
    return F.layer_norm(x, x.shape[-1:], weight, bias, eps)


def make_inputs(shape, dtype, device):
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(shape, generator=g, dtype=dtype).to(device)
    weight = torch.rand(shape[-1], generator=g, dtype=dtype).to(device)
    bias = torch.randn(shape[-1], generator=g, dtype=dtype).to(device)
    return x, weight, bias


class TestFusedLayerNorm(unittest.TestCase):
    device = "cuda" if torch.cuda.is_available() else "cpu"

    def test_matches_reference(self):
        for shape, dtype in itertools.product(SHAPES, DTYPES):
            with self.subTest(shape=shape, dtype=dtype):
                x, weight, bias = make_inputs(shape, dtype, self.device)
                expected = reference_layer_norm(x, weight, bias)
                actual = fused_layer_norm(x, weight, bias)
                LOG.debug("%s: fused %.1f us", describe(shape, dtype), timed(fused_layer_norm, x, weight, bias) * 1e6)
                LOG.info("shape=%s dtype=%s max diff %.2e", shape, dtype, (actual - expected).abs().max())
                torch.testing.assert_close(actual, expected)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    suite = unittest.TestLoader().loadTestsFromTestCase(TestFusedLayerNorm)
    for test in suite:
        test.test_matches_reference()
    LOG.info("all good (verbose=%s)", args.verbose)


if __name__ == "__main__":
    main()
