"""torch.compile(fullgraph=True) of a gated MLP fails; same failure with backend="aot_eager".

Environment: PyTorch 2.15, CPU and CUDA.
"""
import argparse
import logging
import time

import torch
import torch._dynamo
import torch.nn as nn

logging.basicConfig(level=logging.WARNING)
torch._dynamo.config.cache_size_limit = 64
torch.set_float32_matmul_precision("high")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--mode", default="max-autotune")
    parser.add_argument("--iters", type=int, default=5)
    return parser.parse_args()


class Gate(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)
        self.threshold = 0.0

    def forward(self, x):
        h = self.proj(x)
        # Skip the nonlinearity for batches that are already all positive.
        if h.mean() > self.threshold:
            return h
        return torch.relu(h)


class GatedMLP(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.gate = Gate(hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, x):
        return self.out(self.gate(self.norm(x)))


def environment_report():
    lines = [
        f"torch {torch.__version__}",
        f"cuda available: {torch.cuda.is_available()}",
        f"threads: {torch.get_num_threads()}",
    ]
    if torch.cuda.is_available():
        lines.append(f"device: {torch.cuda.get_device_name(0)}")
    return "\n".join(lines)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def benchmark(fn, x, iters):
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    args = parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = GatedMLP(args.hidden).to(device).eval()
    logging.info("%s\nparameters: %d", environment_report(), count_parameters(model))
    x = torch.randn(args.batch, args.hidden, device=device)
    eager_time = benchmark(model, x, args.iters)
    encoder = torch.compile(model.norm, backend=args.backend)
    encoder(x)
    compiled = torch.compile(model, backend=args.backend, mode=args.mode, fullgraph=True, dynamic=False)
    with torch.no_grad():
        compiled_time = benchmark(compiled, x, args.iters)
    print(f"eager {eager_time * 1e3:.2f} ms, compiled {compiled_time * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
