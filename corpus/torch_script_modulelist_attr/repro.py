"""torch.jit.script refuses the staged encoder (MLOPS-3307).

The keyword-spotting encoder groups its residual blocks by stage.  Eager mode runs
fine and the unit tests pass, but the export job that scripts the model for the
on-device runtime fails with an error whose first line is blank.  This is the
model file plus the export driver, trimmed; CPU, no arguments needed.
"""
import argparse
import io
import logging
import os
import sys
from dataclasses import dataclass
from typing import List, Tuple

import torch
import torch.nn as nn

log = logging.getLogger("kws.export")


@dataclass
class EncoderConfig:
    n_mels: int = 40
    channels: Tuple[int, ...] = (16, 24)
    blocks_per_stage: int = 2
    kernel: int = 3
    n_keywords: int = 12
    frames: int = 50


class ResBlock(nn.Module):
    def __init__(self, channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, padding=kernel // 2)
        self.norm = nn.BatchNorm1d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.relu(self.norm(self.conv(x)))


class StagedEncoder(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.stem = nn.Conv1d(cfg.n_mels, cfg.channels[0], 1)
        self.downs = nn.ModuleList(
            nn.Conv1d(a, b, 1) for a, b in zip(cfg.channels[:-1], cfg.channels[1:])
        )
        # one ModuleList of residual blocks per stage
        self.blocks = [
            nn.ModuleList(ResBlock(ch, cfg.kernel) for _ in range(cfg.blocks_per_stage))
            for ch in cfg.channels
        ]
        self.head = nn.Linear(cfg.channels[-1], cfg.n_keywords)

    def forward(self, mels: torch.Tensor) -> torch.Tensor:
        x = self.stem(mels)
        for block in self.blocks[0]:
            x = block(x)
        for down in self.downs:
            x = down(x)
        for block in self.blocks[1]:
            x = block(x)
        return self.head(x.mean(dim=-1))


def parameter_report(model: nn.Module) -> List[str]:
    rows = []
    for name, p in model.named_parameters():
        rows.append("%-28s %s" % (name, tuple(p.shape)))
    return rows


def eager_smoke_test(model: nn.Module, cfg: EncoderConfig) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        out = model(torch.randn(2, cfg.n_mels, cfg.frames))
    assert out.shape == (2, cfg.n_keywords), out.shape
    return out


def export(model: nn.Module, cfg: EncoderConfig, mode: str) -> bytes:
    example = torch.randn(1, cfg.n_mels, cfg.frames)
    if mode == "trace":
        exported = torch.jit.trace(model, example)
    else:
        exported = torch.jit.script(model)
    buf = io.BytesIO()
    torch.jit.save(exported, buf)
    return buf.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="export the KWS encoder")
    parser.add_argument("--mode", choices=["script", "trace"], default="script")
    parser.add_argument("--out", default=os.path.join("artifacts", "kws_encoder.pt"))
    parser.add_argument("--write", action="store_true", help="write the artifact to --out")
    parser.add_argument("--keywords", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="[%(levelname)s] %(message)s")

    torch.manual_seed(args.seed)
    cfg = EncoderConfig(n_keywords=args.keywords)
    model = StagedEncoder(cfg)
    for row in parameter_report(model):
        log.debug(row)
    logits = eager_smoke_test(model, cfg)
    log.info("eager ok: logits %s", tuple(logits.shape))

    blob = export(model, cfg, args.mode)
    log.info("exported %d bytes (%s)", len(blob), args.mode)
    if args.write:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "wb") as f:
            f.write(blob)
    return 0


if __name__ == "__main__":
    sys.exit(main())
