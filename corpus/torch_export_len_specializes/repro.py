# Exporting a token packer with a dynamic sequence length fails: the packer walks the
# sequence with a Python loop over len(), which pins the length to the example's.
import argparse
import logging

import torch
from torch import nn
from torch.export import Dim, export

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("packer")

HIDDEN = 16
SEQ = 6


class Embed(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        return self.proj(x)


class Packer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.embed = Embed(hidden)
        self.scale = 0.5

    def forward(self, tokens):
        h = self.embed(tokens)
        rows = []
        for i in range(len(h)):
            rows.append(h[i] * self.scale)
        return torch.stack(rows)


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--seq", type=int, default=SEQ)
    p.add_argument("--hidden", type=int, default=HIDDEN)
    return p.parse_args([])


def main():
    args = parse()
    model = Packer(args.hidden).eval()
    tokens = torch.randn(args.seq, args.hidden)
    log.info("eager output %s", tuple(model(tokens).shape))
    seq = Dim("seq", max=512)
    program = export(model, (tokens,), dynamic_shapes={"tokens": {0: seq}})
    log.info("exported %d nodes", len(program.graph.nodes))


if __name__ == "__main__":
    main()
