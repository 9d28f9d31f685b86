"""torch.export of the point-cloud scorer fails with "Constraints violated (dz)!".

We export the scorer with a dynamic number of points (dim "dz", up to 1024) so
that one artifact serves every scan.  Eager inference works for every size we
tried.  The export step (ExportConfig below matches the nightly job) dies
with a UserError.  Trimmed from export_scorer.py; CPU only, no arguments needed.
"""
import argparse
import json
import logging
import sys
import time
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
from torch.export import Dim

log = logging.getLogger("export_scorer")


@dataclass
class ExportConfig:
    in_dim: int = 3
    hidden: int = 16
    min_points: int = 4
    max_points: int = 1024
    example_points: int = 8
    strict: bool = False
    seed: int = 11


class PointScorer(nn.Module):
    """Per-point MLP with a pooled context term once a scan has enough points."""

    def __init__(self, cfg: ExportConfig):
        super().__init__()
        self.cfg = cfg
        self.point_mlp = nn.Sequential(nn.Linear(cfg.in_dim, cfg.hidden), nn.ReLU())
        self.context = nn.Linear(cfg.hidden, cfg.hidden)
        self.head = nn.Linear(cfg.hidden, 1)

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        feats = self.point_mlp(points)
        if points.shape[0] > self.cfg.min_points:
            # pooled context is only meaningful once a scan has a few points
            feats = feats + self.context(feats.mean(dim=0, keepdim=True))
        return self.head(feats).squeeze(-1)


def make_scan(n: int, cfg: ExportConfig) -> torch.Tensor:
    gen = torch.Generator().manual_seed(cfg.seed + n)
    return torch.randn(n, cfg.in_dim, generator=gen)


def eager_check(model: nn.Module, cfg: ExportConfig) -> dict:
    sizes = [cfg.example_points, 64, 3]
    shapes = {}
    with torch.no_grad():
        for n in sizes:
            shapes[n] = tuple(model(make_scan(n, cfg)).shape)
    return shapes


def dynamic_spec(cfg: ExportConfig) -> dict:
    points = Dim("dz", max=cfg.max_points)
    return {"points": {0: points}}


def run_export(model: nn.Module, cfg: ExportConfig):
    example = (make_scan(cfg.example_points, cfg),)
    start = time.perf_counter()
    program = torch.export.export(model, example, dynamic_shapes=dynamic_spec(cfg), strict=cfg.strict)
    log.info("exported in %.2fs", time.perf_counter() - start)
    return program


def summarize(program) -> str:
    nodes = list(program.graph.nodes)
    ops = sorted({str(n.target) for n in nodes if n.op == "call_function"})
    return json.dumps({"nodes": len(nodes), "ops": ops[:5]})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="export the point scorer")
    parser.add_argument("--max-points", type=int, default=1024)
    parser.add_argument("--example-points", type=int, default=8)
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--skip-eager", action="store_true")
    parser.add_argument("--dump-config", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s:%(name)s: %(message)s")

    cfg = ExportConfig(max_points=args.max_points, example_points=args.example_points,
                       strict=args.strict)
    if args.dump_config:
        print(json.dumps(asdict(cfg), indent=2))
    torch.manual_seed(cfg.seed)
    model = PointScorer(cfg).eval()
    if not args.skip_eager:
        log.info("eager shapes: %s", eager_check(model, cfg))
    program = run_export(model, cfg)
    print(summarize(program))
    return 0


if __name__ == "__main__":
    sys.exit(main())
