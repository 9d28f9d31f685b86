"""Anomaly mode flags NaN gradients in a physics-informed loss after a few steps."""
import argparse
import logging
import math
import random

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("pinn")


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--anomaly", type=int, default=1)
    return parser.parse_args()


@dataclass
class Domain:
    x_min: float = -1.0
    x_max: float = 1.0
    t_max: float = 1.0

    def width(self):
        return self.x_max - self.x_min


def boundary_loss(model, domain, n, device):
    t = torch.rand(n, 1, device=device, dtype=torch.float64) * domain.t_max
    left = torch.cat([torch.full_like(t, domain.x_min), t], dim=1)
    right = torch.cat([torch.full_like(t, domain.x_max), t], dim=1)
    return (model(left) - model(right)).pow(2).mean()


class PINN(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )

    def forward(self, xt):
        return self.net(xt)


def sample_points(n, device):
    x = torch.rand(n, 1, device=device) * 2 - 1
    t = torch.rand(n, 1, device=device)
    return torch.cat([x, t], dim=1).requires_grad_(True)


def energy_loss(u):
    # The energy density should be non-negative, so its square root "cannot" be NaN.
    density = u.pow(2) - 0.5
    return torch.sqrt(density).nan_to_num().mean()


def main():
    args = get_args()
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    torch.autograd.set_detect_anomaly(bool(args.anomaly))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = PINN(args.hidden).to(device).double()
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1) if args.steps > 10 else torch.optim.Adam(model.parameters())
    for step in range(args.steps):
        xt = sample_points(args.points, device).double()
        u = model(xt)
        loss = energy_loss(u) + u.mean().abs() * math.pi
        loss = loss + 0.1 * boundary_loss(model, Domain(), 64, device)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("step %d loss %.5f", step, loss.item())


if __name__ == "__main__":
    main()
