import torch
x = torch.randn(2, 8)
fast = (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True, unbiased=True) + 1e-5).sqrt()
torch.testing.assert_close(fast, torch.nn.functional.layer_norm(x, (8,)))
