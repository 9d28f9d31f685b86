import torch
w = torch.ones(2, requires_grad=True)
torch.func.vmap(lambda l: torch.autograd.grad(l, w))(w * 3)
