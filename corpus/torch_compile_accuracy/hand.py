import torch
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
x = torch.randn(8)
assert torch.allclose(torch.compile(torch.relu)(x), torch.relu(x)), "compiled output differs from eager"
