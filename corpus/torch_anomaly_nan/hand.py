import torch
torch.autograd.set_detect_anomaly(True)
torch.sqrt(torch.tensor([-1.0], requires_grad=True)).nan_to_num().sum().backward()
