"""Sequence classifier: building the model from the experiment config fails.

The experiment sweeps model width; the `wide` preset was added by hand and the
trainer now dies before the first step.  Config dicts are merged from the base
preset, the named preset and command-line overrides.

    python sweep.py --preset wide
"""
import argparse
import copy
import json
import logging
import sys

import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
logger = logging.getLogger("sweep")

BASE = {
    "model": {"vocab": 1000, "d_model": 128, "n_heads": 8, "n_layers": 2, "dropout": 0.1},
    "train": {"batch_size": 16, "seq_len": 32, "lr": 1e-3, "steps": 20},
}

PRESETS = {
    "small": {"model": {"d_model": 64, "n_heads": 4}},
    "base": {},
    "wide": {"model": {"d_model": 200, "n_heads": 12, "n_layers": 1}},
}


def merge(base, override):
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_overrides(items):
    result = {}
    for item in items:
        path, _, raw = item.partition("=")
        section, _, key = path.partition(".")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        result.setdefault(section, {})[key] = value
    return result


class Block(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x):
        h, _ = self.attn(x, x, x, need_weights=False)
        x = self.norm1(x + h)
        return self.norm2(x + self.ff(x))


class Classifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg["vocab"], cfg["d_model"])
        self.blocks = nn.ModuleList(
            [Block(cfg["d_model"], cfg["n_heads"], cfg["dropout"]) for _ in range(cfg["n_layers"])]
        )
        self.head = nn.Linear(cfg["d_model"], 2)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


def build(config):
    logger.info("model config: %s", config["model"])
    return Classifier(config["model"])


def train(model, cfg):
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for step in range(cfg["steps"]):
        tokens = torch.randint(0, 1000, (cfg["batch_size"], cfg["seq_len"]))
        labels = torch.randint(0, 2, (cfg["batch_size"],))
        loss = nn.functional.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 5 == 0:
            logger.info("step %d loss %.3f", step, loss.item())


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="wide", choices=sorted(PRESETS))
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args(argv)
    config = merge(merge(BASE, PRESETS[args.preset]), parse_overrides(args.set))
    torch.manual_seed(0)
    model = build(config)
    train(model, config["train"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
