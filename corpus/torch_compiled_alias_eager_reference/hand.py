import torch
def f(x):
    if x.item() > 0.5:
        pass
torch.compile(f, fullgraph=True, backend="eager")(torch.tensor(1.0))
