import torch
torch.nn.HuberLoss()(torch.randn(1, requires_grad=True), torch.tensor([1])).backward()
