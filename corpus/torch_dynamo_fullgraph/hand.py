import torch
def f(x):
    return x if x.mean() > 0 else -x
torch.compile(f, backend="eager", fullgraph=True)(torch.randn(2))
