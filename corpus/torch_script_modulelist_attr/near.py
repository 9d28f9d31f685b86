# same blank first line and same attribute, but the attribute was never set (no list to convert)
import torch
class M(torch.nn.Module):
    def forward(self, x):
        return self.blocks[0]
torch.jit.script(M())
