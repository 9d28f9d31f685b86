import torch
class LoaderError(Exception): pass
try:
    torch.nn.Linear(48, 64).load_state_dict(torch.nn.Linear(32, 64).state_dict())
except RuntimeError as e:
    raise LoaderError("could not restore the encoder") from e
