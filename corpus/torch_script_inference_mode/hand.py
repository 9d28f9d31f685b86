import torch
with torch.inference_mode():
    x = torch.randn(3, 4)
torch.jit.script(torch.nn.Linear(4, 2))(x)
