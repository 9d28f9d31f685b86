import torch
class Packer(torch.nn.Module):
    def forward(self, tokens):
        len(tokens)
torch.export.export(Packer(), (torch.zeros(2),), dynamic_shapes={"tokens": {0: torch.export.Dim("seq")}})
