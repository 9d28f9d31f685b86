from dataclasses import dataclass
@dataclass
class Shipment:
    recipient: "Address" = None
    carrier: str
