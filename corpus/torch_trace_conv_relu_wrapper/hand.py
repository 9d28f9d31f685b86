import torch
torch.jit.trace(torch.nn.Conv2d(1, 1, 1), torch.ones(1, 1, 1, 1))(torch.ones(1, 1, 1))
