import torch
torch.tensor([[1, 2], [1]])
