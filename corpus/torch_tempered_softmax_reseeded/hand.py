import torch
x = torch.tensor([[30.0, 0.0]])
e = torch.exp(x / 0.3)
torch.testing.assert_close(e / e.sum(dim=1, keepdim=True), torch.softmax(x / 0.3, dim=1))
