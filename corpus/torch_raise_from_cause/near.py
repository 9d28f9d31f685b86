# same LoaderError and same first cause line ("Error(s) in loading state_dict for Linear:"), but the cause is a missing key, not a size mismatch
import torch
class LoaderError(Exception): pass
try:
    torch.nn.Linear(32, 64).load_state_dict({"weight": torch.zeros(64, 32)})
except RuntimeError as e:
    raise LoaderError("could not restore the encoder") from e
