"""Resuming from the March checkpoint fails with "could not restore the encoder".

After bumping the feature extractor, `resume.py` refuses every checkpoint from
the previous run.  The only message we get is our own LoaderError, which does
not say what is wrong.  The checkpoint is rebuilt in memory below (same
layout as on disk: encoder / head / optional EMA copy), so this runs standalone
on CPU with no arguments.
"""
import argparse
import io
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, Optional

import torch
import torch.nn as nn

log = logging.getLogger("resume")


class LoaderError(Exception):
    """Anything that stops us from resuming; shown to the user as is."""


@dataclass
class ModelConfig:
    feat_dim: int = 48          # was 32 before the extractor bump
    hidden: int = 64
    classes: int = 5
    use_ema: bool = True
    strict: bool = True
    extra: Dict[str, str] = field(default_factory=lambda: {"run": "2024-03-11"})


class Classifier(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.encoder = nn.Linear(cfg.feat_dim, cfg.hidden)
        self.head = nn.Linear(cfg.hidden, cfg.classes)
        self.ema_encoder: Optional[nn.Module] = (
            nn.Linear(cfg.feat_dim, cfg.hidden) if cfg.use_ema else None
        )

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))


def old_checkpoint() -> dict:
    """What the March run wrote: feat_dim 32, and no EMA weights (EMA was off then)."""
    old = Classifier(ModelConfig(feat_dim=32, use_ema=False))
    return {
        "encoder": old.encoder.state_dict(),
        "head": old.head.state_dict(),
        "meta": {"epoch": 41, "feat_dim": 32},
    }


def read_checkpoint(data: bytes) -> dict:
    try:
        return torch.load(io.BytesIO(data), weights_only=True)
    except Exception as e:
        raise LoaderError("checkpoint is unreadable") from e


def restore(kind: str, module: nn.Module, ckpt: dict, key: str, strict: bool) -> None:
    try:
        module.load_state_dict(ckpt[key], strict=strict)
    except (KeyError, RuntimeError) as e:
        raise LoaderError("could not restore the %s" % kind) from e


def resume(model: Classifier, ckpt: dict, cfg: ModelConfig) -> int:
    if model.ema_encoder is not None:
        try:
            restore("encoder", model.ema_encoder, ckpt, "ema_encoder", cfg.strict)
        except LoaderError as e:
            log.warning("%s (%r); EMA starts from scratch", e, e.__cause__)
    restore("encoder", model.encoder, ckpt, "encoder", cfg.strict)
    restore("head", model.head, ckpt, "head", cfg.strict)
    return int(ckpt.get("meta", {}).get("epoch", 0)) + 1


def sanity_forward(model: nn.Module, cfg: ModelConfig) -> None:
    with torch.no_grad():
        out = model(torch.zeros(2, cfg.feat_dim))
    log.info("sanity forward: %s", tuple(out.shape))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="resume training from a checkpoint")
    parser.add_argument("--checkpoint", default=os.path.join("runs", "march", "last.pt"))
    parser.add_argument("--feat-dim", type=int, default=48)
    parser.add_argument("--no-ema", action="store_true")
    parser.add_argument("--non-strict", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(name)s %(levelname)s: %(message)s")

    cfg = ModelConfig(feat_dim=args.feat_dim, use_ema=not args.no_ema, strict=not args.non_strict)
    torch.manual_seed(0)
    model = Classifier(cfg)
    sanity_forward(model, cfg)
    if os.path.exists(args.checkpoint):
        with open(args.checkpoint, "rb") as f:
            ckpt = read_checkpoint(f.read())
    else:
        log.info("%s not found; using the embedded copy", args.checkpoint)
        ckpt = old_checkpoint()
    epoch = resume(model, ckpt, cfg)
    print("resuming at epoch %d" % epoch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
