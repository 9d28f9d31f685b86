"""Batch inference of a small image classifier, compiled; the compiled kernel raises."""
import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._inductor import config as inductor_config

logging.basicConfig(level=logging.WARNING)
log = logging.getLogger("infer")

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


@dataclass
class Config:
    channels: list = field(default_factory=lambda: [3, 16, 32])
    image: int = 32
    classes: int = 10
    batch: int = 16
    threads: int = 2
    labels: dict = field(default_factory=lambda: {i: f"class_{i}" for i in range(10)})


class ConvNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        layers = []
        for cin, cout in zip(cfg.channels, cfg.channels[1:]):
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]
        self.features = nn.Sequential(*layers)
        side = cfg.image // 2 ** (len(cfg.channels) - 1)
        self.fc = nn.Linear(cfg.channels[-1] * side * side, cfg.classes)

    def forward(self, x):
        x = self.features(x)
        return self.fc(torch.flatten(x, 1))


def load_images(cfg, n):
    torch.manual_seed(0)
    images = torch.rand(n, cfg.channels[0], cfg.image, cfg.image)
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    return (images - mean) / std


def predict(model, images, cfg):
    results = []
    with torch.inference_mode():
        for chunk in images.split(cfg.batch):
            probs = F.softmax(model(chunk), dim=-1)
            top = probs.argmax(dim=-1)
            results += [cfg.labels[int(i)] for i in top]
    return results


def describe(model):
    params = sum(p.numel() for p in model.parameters())
    buffers = sum(b.numel() for b in model.buffers())
    return f"{type(model).__name__}: {params} parameters, {buffers} buffer elements"


def main():
    cfg = Config()
    torch.set_num_threads(cfg.threads)
    model = ConvNet(cfg).eval()
    log.warning(describe(model))
    model = torch.compile(model)
    images = load_images(cfg, 2 * cfg.batch)
    start = time.perf_counter()
    labels = predict(model, images, cfg)
    log.warning("%d images in %.2fs", len(labels), time.perf_counter() - start)
    json.dump({"labels": labels, "pid": os.getpid()}, sys.stdout)


if __name__ == "__main__":
    main()
