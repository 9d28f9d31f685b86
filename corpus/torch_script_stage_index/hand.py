import torch
class Stage(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mods = torch.nn.ModuleList()
class Denoiser(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Stage()
    def forward(self, x):
        stages = [self.decoder]
        for layer in stages[0].mods:
            x = layer(x)
torch.jit.script(Denoiser())
