import torch
class M(torch.nn.Module):
    def forward(self, x):
        return x.view(int(x.shape[0]))
torch.jit.trace(M(), torch.ones(2))(torch.ones(1))
