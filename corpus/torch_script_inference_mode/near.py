# same first line and TorchScript traceback, but the inner error is a shape mismatch
import torch
m = torch.jit.script(torch.nn.Linear(4, 2))
m(torch.randn(3, 5))
