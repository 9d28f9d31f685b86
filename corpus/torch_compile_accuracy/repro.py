"""Parity check: a gated MLP block, eager against torch.compile, before a release."""
import argparse
import json
import logging
import os
import platform
import sys
import tempfile

import torch
import torch.nn as nn
import torch._inductor.config as inductor_config

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("parity")

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


class GatedMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.gate = nn.Linear(dim, hidden)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down(torch.relu(self.gate(h)) * self.up(h))


def options(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    return p.parse_args(argv)


def report(name, eager, compiled, args):
    diff = (eager - compiled).abs()
    bad = ~torch.isclose(eager, compiled, rtol=args.rtol, atol=args.atol)
    log.info("%s: max abs diff %.3e, %d of %d elements off", name, diff.max().item(), int(bad.sum()), bad.numel())
    return int(bad.sum())


def environment():
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cuda": torch.cuda.is_available(),
    }


def save_report(results, path=None):
    path = path or os.path.join(tempfile.gettempdir(), "parity_report.json")
    with open(path, "w") as fh:
        json.dump({"env": environment(), "results": results}, fh, indent=2)
    log.info("report written to %s", path)
    return path


def main(argv):
    args = options(argv)
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    block = GatedMLP(args.dim, args.hidden).to(dtype).eval()
    x = torch.randn(args.tokens, args.dim, dtype=dtype)
    with torch.no_grad():
        eager = block(x)
        compiled = torch.compile(block)(x)
    off = report("gated_mlp", eager, compiled, args)
    save_report({"gated_mlp": off})
    assert torch.allclose(eager, compiled, rtol=args.rtol, atol=args.atol), (
        f"compiled output differs from eager ({off} elements not close)"
    )
    log.info("parity ok")


if __name__ == "__main__":
    main(sys.argv[1:])
