# the same message from a plain misuse: the transform stays, but the weights never required grad
import torch
w = torch.ones(2)
torch.func.vmap(lambda l: torch.autograd.grad(l, [w]))(w * 3)
