import torch
def forward(x):
    if x.sum() > 0:
        return x
    return -x
torch.compile(forward, backend="eager", fullgraph=True)(torch.randn(4))
