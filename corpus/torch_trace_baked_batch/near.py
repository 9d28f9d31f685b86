# the same message from a plain misuse: the module's own forward views every batch as two rows, traced or not
import torch
class M(torch.nn.Module):
    def forward(self, x):
        return x.view(2)
torch.jit.trace(M(), torch.ones(2))(torch.ones(1))
