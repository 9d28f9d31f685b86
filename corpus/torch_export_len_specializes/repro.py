# Exporting a token packer with a dynamic sequence length fails: the packer walks the
# sequence with a Python loop over len(), which pins the length to the example's.
import argparse
import dataclasses
import json
import logging
import os
import warnings

import torch
from torch import nn
from torch.export import Dim, export

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("packer")
warnings.filterwarnings("ignore", category=UserWarning)

HIDDEN = 16
SEQ = 6


@dataclasses.dataclass
class PackerConfig:
    hidden: int = HIDDEN
    seq: int = SEQ
    scale: float = 0.5
    max_seq: int = 512
    out_dir: str = "exported"


class Embed(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        return self.proj(x)


class Packer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = Embed(config.hidden)
        self.scale = config.scale

    def forward(self, tokens):
        h = self.embed(tokens)
        rows = []
        for i in range(len(h)):
            rows.append(h[i] * self.scale)
        return torch.stack(rows)


def describe(model):
    total = sum(p.numel() for p in model.parameters())
    return {"parameters": total, "layers": len(list(model.modules()))}


def save_summary(config, summary):
    os.makedirs(config.out_dir, exist_ok=True)
    path = os.path.join(config.out_dir, "summary.json")
    with open(path, "w") as fh:
        json.dump(summary, fh, indent=2)
    return path


def parse():
    p = argparse.ArgumentParser(description="export the token packer")
    p.add_argument("--seq", type=int, default=SEQ)
    p.add_argument("--hidden", type=int, default=HIDDEN)
    p.add_argument("--dry-run", action="store_true")
    return p.parse_args([])


def main():
    args = parse()
    config = PackerConfig(hidden=args.hidden, seq=args.seq)
    model = Packer(config).eval()
    log.info("model %s", describe(model))
    tokens = torch.randn(config.seq, config.hidden)
    with torch.no_grad():
        log.info("eager output %s", tuple(model(tokens).shape))
    seq = Dim("seq", max=config.max_seq)
    program = export(model, (tokens,), dynamic_shapes={"tokens": {0: seq}})
    log.info("exported %d nodes", len(program.graph.nodes))
    if not args.dry_run:
        log.info("wrote %s", save_summary(config, {"nodes": len(program.graph.nodes)}))


if __name__ == "__main__":
    main()
