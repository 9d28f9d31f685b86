import torch
torch.nn.Linear(2, 1)(torch.randn(1, 3))
