import torch
m = torch.jit.script(torch.nn.Linear(4, 2))
with torch.inference_mode():
    x = torch.randn(3, 4)
m(x)
