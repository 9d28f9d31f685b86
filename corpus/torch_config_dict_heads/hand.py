import torch
torch.nn.MultiheadAttention(3, 2)
