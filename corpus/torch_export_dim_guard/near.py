# same "Constraints violated (dz)!" first line, but the detail is a specialization, not a range guard
import torch
class M(torch.nn.Module):
    def forward(self, x):
        return x + torch.ones(8)
torch.export.export(M(), (torch.randn(8),), dynamic_shapes={"x": {0: torch.export.Dim("dz", max=1024)}})
