from typing import Any, Literal, Optional

_Mechanism = Literal["gaussian", "subsampled-gaussian", "laplace"]
_Accountant = Literal["rdp", "rdp-mironov", "zcdp", "gdp", "pld", "basic", "advanced", "optimal"]

MECHANISMS: tuple[str, ...]

def epsilon(
    mechanism: _Mechanism,
    steps: int,
    delta: float,
    sigma: Optional[float] = None,
    scale: Optional[float] = None,
    sensitivity: Optional[float] = None,
    sampling_rate: Optional[float] = None,
    accountant: Optional[_Accountant] = None,
) -> dict[str, Any]: ...
def sigma(
    mechanism: _Mechanism,
    steps: int,
    epsilon: float,
    delta: float,
    sampling_rate: Optional[float] = None,
    accountant: Optional[_Accountant] = None,
) -> dict[str, Any]: ...
def accountants() -> dict[str, str]: ...
