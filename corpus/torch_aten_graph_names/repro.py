# Repro from the after_aot minifier, run eagerly: the forward graph of a compiled training step.
# The compiled step failed in backward, and so does the graph run on its own.
import argparse
import os
import sys
import time
from math import inf

import torch
from torch import tensor, device
import torch.fx as fx
from torch._dynamo.testing import rand_strided

import torch._dynamo.config
import torch._inductor.config
import torch._functorch.config

torch._dynamo.config.cache_size_limit = 64
torch._inductor.config.fallback_random = True
torch._inductor.config.triton.cudagraphs = False
torch._functorch.config.debug_partitioner = True

isolate_fails_code_str = None

# torch version: 2.15.0
# torch cuda version: None
# CUDA Info: not available


class Repro(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, primals_1, primals_2, primals_3):
        permute = torch.ops.aten.permute.default(primals_1, [1, 0])
        addmm = torch.ops.aten.addmm.default(primals_2, primals_3, permute);  primals_2 = permute = None
        sigmoid = torch.ops.aten.sigmoid.default(addmm);  addmm = None
        mul_ = torch.ops.aten.mul_.Tensor(sigmoid, 0.5);  mul_ = None
        view = torch.ops.aten.view.default(sigmoid, [16, 4, 8])
        sum_1 = torch.ops.aten.sum.dim_IntList(view, [1]);  view = None
        mean = torch.ops.aten.mean.default(sum_1);  sum_1 = None
        return (mean, sigmoid, primals_1, primals_3)


def make_args(device="cpu"):
    primals_1 = rand_strided((32, 64), (64, 1), torch.float32, device).requires_grad_()
    primals_2 = rand_strided((32,), (1,), torch.float32, device).requires_grad_()
    primals_3 = rand_strided((16, 64), (64, 1), torch.float32, device)
    return [primals_1, primals_2, primals_3]


def describe(outputs):
    for i, out in enumerate(outputs):
        print(f"output {i}: shape={tuple(out.shape)} dtype={out.dtype} grad_fn={out.grad_fn}")


def run_repro(mod, args, check_grads=True):
    outputs = mod(*args)
    describe(outputs)
    loss = outputs[0]
    if check_grads:
        loss.backward()
        for i, arg in enumerate(args):
            if arg.grad is not None:
                print(f"grad {i}: norm={arg.grad.norm().item():.4f}")
    return outputs


def save_outputs(outputs, save_dir):
    if save_dir is None:
        return
    os.makedirs(save_dir, exist_ok=True)
    for i, out in enumerate(outputs):
        torch.save(out.detach().cpu(), os.path.join(save_dir, f"out_{i}.pt"))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="run the minified graph eagerly")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--no-grads", action="store_true")
    parser.add_argument("--save-dir", default=None)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


mod = Repro()
if __name__ == "__main__":
    opts = parse_args()
    print(sys.version)
    print(torch.__version__, os.environ.get("TORCHINDUCTOR_CACHE_DIR"))
    torch.set_printoptions(precision=4, sci_mode=False)
    torch.manual_seed(opts.seed)
    start = time.perf_counter()
    args = make_args(opts.device)
    with torch.autograd.set_grad_enabled(True):
        outputs = run_repro(mod, args, check_grads=not opts.no_grads)
    save_outputs(outputs, opts.save_dir)
    print(f"done in {time.perf_counter() - start:.2f}s")
