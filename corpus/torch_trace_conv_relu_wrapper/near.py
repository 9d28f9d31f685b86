# the same message from a plain misuse: the module's own forward calls torch.convolution, which takes no unbatched input, traced or not
import torch
class M(torch.nn.Module):
    def forward(self, x):
        return torch.convolution(x, torch.ones(1, 1, 1, 1), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
torch.jit.trace(M(), torch.ones(1, 1, 1, 1))(torch.ones(1, 1, 1))
