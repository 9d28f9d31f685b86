"""A traced segmentation head rejects a single image that the eager model accepts.

We trace the head on a batch of crops for serving. The eager model takes one image without
a batch dimension (Conv2d accepts unbatched input), so the serving code passes single images
straight through; the traced module raises on the very first one. The stem is a convolution
and its relu, wrapped in its own module so the traced graph keeps readable names.
PyTorch 2.15, CPU only.
"""
import argparse
import logging
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", category=FutureWarning)
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("serve")

NUM_CLASSES = 5
IN_CHANNELS = 3
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def get_args():
    parser = argparse.ArgumentParser(description="trace the segmentation head and serve it")
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--requests", type=int, default=3)
    return parser.parse_args([])


class ConvReLU(nn.Module):
    """A 3x3 convolution and its activation, named for the traced graph."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=3, padding=1)

    def forward(self, x):
        return F.relu(self.conv(x))


class SegHead(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.stem = ConvReLU(IN_CHANNELS, width)
        self.body = ConvReLU(width, width)
        self.classifier = nn.Conv2d(width, NUM_CLASSES, kernel_size=1)

    def forward(self, images):
        return self.classifier(self.body(self.stem(images)))


def normalize(image):
    mean = torch.tensor(MEAN).view(-1, 1, 1)
    std = torch.tensor(STD).view(-1, 1, 1)
    return (image - mean) / std


class Predictor:
    def __init__(self, module):
        self.module = module
        self.served = 0

    def __call__(self, image):
        self.served += 1
        with torch.no_grad():
            logits = self.module(normalize(image))
        return logits.argmax(dim=0)


def main():
    args = get_args()
    torch.manual_seed(7)
    model = SegHead(args.width).eval()
    log.info("model has %d parameters", sum(p.numel() for p in model.parameters()))
    crops = torch.rand(args.batch, IN_CHANNELS, args.size, args.size)
    start = time.time()
    with torch.no_grad():
        traced = torch.jit.trace(model, crops)
    log.info("traced in %.2fs", time.time() - start)
    predict = Predictor(traced)
    for i in range(args.requests):
        image = torch.rand(IN_CHANNELS, args.size, args.size)
        mask = predict(image)
        log.info("request %d: %d pixels of class 0", i, int((mask == 0).sum()))


if __name__ == "__main__":
    main()
