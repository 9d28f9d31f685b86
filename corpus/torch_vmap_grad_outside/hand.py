import torch
w = torch.nn.Parameter(torch.ones(2))
torch.func.vmap(lambda l: torch.autograd.grad(l, [w]))(w * 3)
