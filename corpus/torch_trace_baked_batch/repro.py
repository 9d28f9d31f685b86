"""A traced feature extractor fails when the last batch of the epoch is smaller.

We export the extractor with torch.jit.trace on a full batch of 16 and serve it with the
same batch size; the final batch of a dataset has 5 images and the traced module raises.
Eager works for every batch size. PyTorch 2.15, CPU.
"""
import argparse
import logging
import math
import warnings

import torch
import torch.nn as nn

warnings.filterwarnings("ignore", category=FutureWarning)
log = logging.getLogger("extract")
logging.basicConfig(level=logging.INFO)

IMAGE_SIZE = 32
CHANNELS = 3


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--width", type=int, default=24)
    parser.add_argument("--dataset-size", type=int, default=37)
    return parser.parse_args([])


class ConvBlock(nn.Module):
    """One convolution and its activation; kept as a module so the exporter sees its name."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Extractor(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.block = ConvBlock(CHANNELS, width)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, images):
        feats = self.pool(self.block(images))
        # Flatten per image; the batch size is read as a Python int.
        batch = int(feats.shape[0])
        return feats.view(batch * feats.shape[1])


def batches(total, size):
    for start in range(0, total, size):
        n = min(size, total - start)
        yield torch.randn(n, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)


def describe(features, n):
    per_image = features.numel() // max(n, 1)
    log.info("batch of %d -> %d features per image", n, per_image)


def main():
    args = parse_args()
    torch.manual_seed(0)
    model = Extractor(args.width).eval()
    example = torch.randn(args.batch, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    log.info("traced; %d batches", math.ceil(args.dataset_size / args.batch))
    with torch.no_grad():
        for images in batches(args.dataset_size, args.batch):
            features = traced(images)
            describe(features, images.shape[0])
    print("done")


if __name__ == "__main__":
    main()
