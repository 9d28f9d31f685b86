import torch
def plain_layer_norm(x):
    return (x - x.mean(dim=0, keepdim=True)) * torch.rsqrt(x.var(dim=-1, keepdim=True, unbiased=False) + 1e-5)
x = torch.randn(2, 4)
torch.testing.assert_close(plain_layer_norm(x), torch.nn.LayerNorm(4)(x))
