import torch
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"
torch.compile(torch.relu)(torch.randn(32, 32))
