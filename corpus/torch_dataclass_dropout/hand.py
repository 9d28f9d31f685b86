import torch
torch.nn.Dropout2d(1.5)
