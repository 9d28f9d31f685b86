import torch
x = torch.randn(4, 8)
d = x.shape[-1]
fast = x * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) / (d - 1) + 1e-6)
ref = torch.nn.functional.rms_norm(x, (d,), eps=1e-6)
assert torch.allclose(ref, fast), "output mismatch"
