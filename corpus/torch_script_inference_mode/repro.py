"""Repro for SERVE-812: online calibration of the scripted ranker crashes.

The ranker is exported with torch.jit.script for the serving fleet.  Feature
vectors are computed once per request batch inside torch.inference_mode() (the
feature cache is shared with the scoring path, which is fast that way), then the
calibration step fine-tunes the temperature on the same cached features and
calls backward.  Scoring works; calibration dies inside the TorchScript
interpreter.  Trimmed from ranker_service.py; CPU only, no arguments needed.
"""
import argparse
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
import torch.nn as nn

log = logging.getLogger("ranker")


@dataclass
class RankerConfig:
    features: int = 24
    hidden: int = 32
    dropout: float = 0.0
    batch: int = 16
    calib_steps: int = 3
    lr: float = 0.05
    seed: int = 1234
    tags: List[str] = field(default_factory=lambda: ["ctr", "dwell"])


class Ranker(nn.Module):
    def __init__(self, cfg: RankerConfig):
        super().__init__()
        self.proj = nn.Linear(cfg.features, cfg.hidden)
        self.drop = nn.Dropout(cfg.dropout)
        self.out = nn.Linear(cfg.hidden, 1)
        self.log_temp = nn.Parameter(torch.zeros(1))

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.proj(feats))
        logits = self.out(self.drop(h)).squeeze(-1)
        return logits / self.log_temp.exp()


class FeatureCache:
    """Per-batch feature vectors, computed once and shared by scoring and calibration."""

    def __init__(self, cfg: RankerConfig):
        self.cfg = cfg
        self.store: Dict[str, torch.Tensor] = {}
        self.hits = 0

    def _compute(self, key: str) -> torch.Tensor:
        gen = torch.Generator().manual_seed(self.cfg.seed + len(key))
        raw = torch.rand(self.cfg.batch, self.cfg.features, generator=gen)
        return (raw - raw.mean(0)) / (raw.std(0) + 1e-6)

    def get(self, key: str) -> torch.Tensor:
        if key in self.store:
            self.hits += 1
            return self.store[key]
        with torch.inference_mode():
            feats = self._compute(key)
        self.store[key] = feats
        return feats


def export_for_serving(model: nn.Module, eager: bool) -> nn.Module:
    if eager:
        log.warning("serving the eager model (debug only)")
        return model
    scripted = torch.jit.script(model)
    log.info("scripted ranker: %d parameters", sum(p.numel() for p in scripted.parameters()))
    return scripted


def score(model: nn.Module, feats: torch.Tensor) -> List[float]:
    with torch.no_grad():
        return torch.sigmoid(model(feats)).tolist()


def labels_for(key: str, n: int) -> torch.Tensor:
    # clicks from the request log; deterministic stand-in
    return torch.tensor([float((i * 7 + len(key)) % 3 == 0) for i in range(n)])


def calibrate(model: nn.Module, feats: torch.Tensor, labels: torch.Tensor, cfg: RankerConfig) -> float:
    opt = torch.optim.SGD([p for n, p in model.named_parameters() if "log_temp" in n], lr=cfg.lr)
    loss_value = math.nan
    for step in range(cfg.calib_steps):
        opt.zero_grad()
        logits = model(feats)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
        loss.backward()
        opt.step()
        loss_value = loss.item()
        log.debug("calib step %d loss %.4f", step, loss_value)
    return loss_value


def report(scores: List[float], loss: Optional[float], elapsed: float) -> str:
    top = sorted(range(len(scores)), key=lambda i: -scores[i])[:3]
    return "top=%s calib_loss=%s (%.1f ms)" % (top, "n/a" if loss is None else "%.4f" % loss, elapsed * 1e3)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="ranker service smoke test")
    parser.add_argument("--eager", action="store_true", help="skip torch.jit.script")
    parser.add_argument("--no-calibrate", action="store_true")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--request", default="req-0001")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")

    cfg = RankerConfig(batch=args.batch)
    torch.manual_seed(cfg.seed)
    model = export_for_serving(Ranker(cfg).train(), args.eager)
    cache = FeatureCache(cfg)

    start = time.perf_counter()
    feats = cache.get(args.request)
    scores = score(model, feats)
    loss = None
    if not args.no_calibrate:
        labels = labels_for(args.request, cfg.batch)
        loss = calibrate(model, cache.get(args.request), labels, cfg)
    print(report(scores, loss, time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
