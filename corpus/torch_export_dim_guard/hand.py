import torch
class M(torch.nn.Module):
    def forward(self, x):
        return x * 2 if x.shape[0] > 4 else x
torch.export.export(M(), (torch.randn(8),), dynamic_shapes={"x": {0: torch.export.Dim("dz", max=1024)}})
