# the same message from a plain misuse: the library's LayerNorm compared with its own input, the custom code gone
import torch
x = torch.randn(2)
torch.testing.assert_close(torch.nn.LayerNorm(2)(x), x)
