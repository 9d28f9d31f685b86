"""Custom weight init for a residual MLP fails before training starts."""
import argparse
import logging
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn

os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "127.0.0.1")
os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", "29511")

logging.basicConfig(format="[%(levelname)s] %(message)s", level=logging.INFO)
logger = logging.getLogger("init")


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--gain", type=float, default=0.5)
    p.add_argument("--dtype", default="float64")
    p.add_argument("--distributed", action="store_true")
    return p.parse_args()


def setup(distributed):
    if distributed:
        dist.init_process_group("gloo", rank=0, world_size=1)
    if torch.cuda.is_available():
        return torch.device("cuda", 0)
    return torch.device("cpu")


class ResidualMLP(nn.Module):
    def __init__(self, width, layers, dtype):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width, dtype=dtype) for _ in range(layers))
        self.scale = nn.Parameter(torch.ones(width, dtype=dtype))

    def forward(self, x):
        for layer in self.layers:
            x = x + torch.tanh(layer(x))
        return x * self.scale


def parameter_summary(model):
    rows = []
    for name, param in model.named_parameters():
        rows.append(f"{name:<20} {tuple(param.shape)!s:<16} {param.dtype}")
    return "\n".join(rows)


def check_finite(model):
    for name, param in model.named_parameters():
        if not torch.isfinite(param).all():
            raise ValueError(f"non-finite values in {name}")


def scaled_init_(model, gain):
    # Depth-scaled init: every weight is multiplied in place by gain / sqrt(depth).
    depth = len(model.layers)
    factor = gain / math.sqrt(depth)
    for name, param in model.named_parameters():
        if name.endswith("weight"):
            param.mul_(factor)
        elif name.endswith("bias"):
            param.zero_()
    logger.info("scaled %d layers by %.3f", depth, factor)


def main():
    args = parse()
    device = setup(args.distributed)
    dtype = getattr(torch, args.dtype)
    model = ResidualMLP(args.width, args.layers, dtype).to(device)
    logger.info("parameters:\n%s", parameter_summary(model))
    scaled_init_(model, args.gain)
    check_finite(model)
    x = torch.randn(8, args.width, dtype=dtype, device=device)
    out = model(x)
    logger.info("output norm %.3f", out.norm().item())
    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
