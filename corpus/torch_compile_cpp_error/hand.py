import torch
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
torch.compile(torch.relu)(torch.randn(8))
