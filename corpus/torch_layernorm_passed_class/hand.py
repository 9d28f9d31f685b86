import torch
class FastLayerNorm(torch.nn.Module):
    def __init__(self, width, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(width))
        self.bias = torch.nn.Parameter(torch.zeros(width))
    def forward(self, x):
        n = x.shape[-1]
        total = x.sum(dim=-1, keepdim=True)
        squares = (x * x).sum(dim=-1, keepdim=True)
        mean = total / n
        var = squares / n - mean
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
x = torch.randn(4, 8) * 3 + 1
torch.testing.assert_close(FastLayerNorm(8)(x), torch.nn.LayerNorm(8)(x))
