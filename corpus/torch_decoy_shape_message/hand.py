import torch
torch.nn.Linear(32, 4)(torch.randn(2, 30))
