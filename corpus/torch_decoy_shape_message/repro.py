"""Repro: the tabular scorer crashes with a shape error after the feature store update.

The nightly scoring job fails on its first batch.  Our own pre-flight check uses
torch's wording on purpose (so that the alerting groups both) and passes: the two
dropped columns are deprecated ones.  The error comes from torch itself.  Trimmed copy of scorer.py with a
synthetic batch of the new feature layout; CPU, no arguments needed.
"""
import argparse
import json
import logging
import sys
from typing import Dict, List

import torch
import torch.nn as nn

log = logging.getLogger("scorer")

FEATURES_V1 = [f"f{i:02d}" for i in range(32)]
# The feature store dropped two deprecated columns in v2.
DEPRECATED = {"f07", "f19"}
FEATURES_V2 = [name for name in FEATURES_V1 if name not in DEPRECATED]

MODEL_CONFIG = json.loads('{"in_features": 32, "hidden": 16, "classes": 3, "dropout": 0.1}')


class Scorer(nn.Module):
    def __init__(self, in_features: int, hidden: int, classes: int, dropout: float):
        super().__init__()
        self.encoder = nn.Linear(in_features, hidden)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        h = torch.relu(self.encoder(x))
        return self.head(self.dropout(h))


def check_features(columns: List[str], model: Scorer) -> None:
    """Fail early, with the same words torch would use, when a column the model needs is gone."""
    missing = [c for c in FEATURES_V1 if c not in columns and c not in DEPRECATED]
    if missing:
        want = model.encoder.in_features
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied (missing {missing}; model takes {want} features)"
        )


def check_output(probs: torch.Tensor, rows: int, classes: int) -> None:
    """The scorer must give one distribution per row; same words again for the alerting."""
    if tuple(probs.shape) != (rows, classes):
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied (scorer output {tuple(probs.shape)}, expected ({rows}, {classes}))"
        )


def load_batch(columns: List[str], rows: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(7)
    values: Dict[str, torch.Tensor] = {c: torch.rand(rows, generator=generator) for c in columns}
    return torch.stack([values[c] for c in columns], dim=1)


def score(model: Scorer, batch: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(batch).softmax(dim=-1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="nightly scorer")
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--no-check", action="store_true", help="skip the pre-flight feature check")
    parser.add_argument("--layout", choices=["v1", "v2"], default="v2")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    torch.manual_seed(0)
    model = Scorer(**MODEL_CONFIG).eval()
    columns = FEATURES_V2 if args.layout == "v2" else FEATURES_V1
    log.info("scoring %d rows with %d features", args.rows, len(columns))
    if not args.no_check:
        check_features(columns, model)
    batch = load_batch(columns, args.rows)
    probs = score(model, batch)
    check_output(probs, args.rows, MODEL_CONFIG["classes"])
    best = probs.argmax(dim=-1).tolist()
    print(json.dumps({"rows": args.rows, "best": best}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
