# the same message from a plain misuse: no vmap, the output simply never required grad
import torch
torch.autograd.grad(torch.ones(2).sum(), torch.ones(2, requires_grad=True))
