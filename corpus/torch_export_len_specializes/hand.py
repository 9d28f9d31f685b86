import torch
from torch.export import Dim, export

class Packer(torch.nn.Module):
    def forward(self, tokens):
        len(tokens)

export(Packer(), (torch.zeros(2),), dynamic_shapes={"tokens": {0: Dim("seq")}})
