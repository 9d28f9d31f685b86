"""Image classifier: the first forward pass fails after switching the dataset to 64x64 crops.

Run: python train_cnn.py --image-size 64
"""
import argparse
import logging
import math
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", category=UserWarning)
logging.basicConfig(stream=sys.stdout, level=logging.DEBUG)
logger = logging.getLogger(__name__)

os.environ.setdefault("OMP_NUM_THREADS", "4")

NUM_CLASSES = 10


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--channels", type=int, default=3)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--amp", action="store_true")
    return parser.parse_args()


def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)


class SmallNet(nn.Module):
    # The classifier's in_features was computed for the old 32x32 crops.
    def __init__(self, channels, width, num_classes=NUM_CLASSES, image_size=32):
        super().__init__()
        self.features = nn.Sequential(
            ConvBlock(channels, width),
            ConvBlock(width, width * 2),
            ConvBlock(width * 2, width * 4),
        )
        flat = width * 4 * (image_size // 8) ** 2
        self.classifier = nn.Sequential(
            nn.Linear(flat, 1024),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(1024, num_classes),
        )
        self.reset_parameters()

    def reset_parameters(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.Linear):
                bound = 1 / math.sqrt(m.in_features)
                nn.init.uniform_(m.weight, -bound, bound)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def fake_loader(batch, channels, size, steps, device):
    for _ in range(steps):
        images = torch.randn(batch, channels, size, size, device=device)
        labels = torch.randint(0, NUM_CLASSES, (batch,), device=device)
        yield images, labels


def accuracy(logits, labels):
    return (logits.argmax(dim=1) == labels).float().mean().item()


def main():
    args = get_args()
    device = pick_device()
    logger.info("device=%s args=%s", device, vars(args))
    model = SmallNet(args.channels, args.width).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    for step, (images, labels) in enumerate(
        fake_loader(args.batch, args.channels, args.image_size, args.steps, device)
    ):
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        logger.debug("step=%d loss=%.3f acc=%.2f", step, loss.item(), accuracy(logits, labels))


if __name__ == "__main__":
    main()
