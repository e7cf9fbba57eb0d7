"""Type stubs of the wbsim package."""
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

import pandas as pd

Scenario = Union[str, os.PathLike[str], Mapping[str, Any]]

__version__: str

class WbsimError(ValueError):
    """A bad scenario, override, kernel or grid."""

    file: Optional[str]
    line: Optional[int]
    key: Optional[str]
    message: str

class Result:
    json: str
    @property
    def report(self) -> Dict[str, Any]: ...
    @property
    def kernel(self) -> str: ...
    @property
    def elapsed_seconds(self) -> float: ...
    @property
    def vmstat(self) -> pd.Series: ...
    @property
    def zones(self) -> pd.DataFrame: ...
    @property
    def series(self) -> pd.DataFrame: ...
    @property
    def devices(self) -> pd.DataFrame: ...
    def plot(self, ax: Any = ...) -> Any: ...

def run(
    scenario: Scenario,
    kernel: Optional[str] = ...,
    seed: Optional[int] = ...,
    *,
    sample_ms: int = ...,
    overrides: Optional[Mapping[str, Any]] = ...,
    **more: Any,
) -> Result: ...
def kernels() -> pd.DataFrame: ...
def experiments() -> List[str]: ...
def reproduce(id: str, runs: Optional[int] = ..., include_cut: bool = ...) -> pd.DataFrame: ...
def sweep(
    scenario: Scenario,
    grid: Mapping[str, Iterable[Any]],
    client: Any = ...,
    store: str = ...,
    metrics: Optional[List[str]] = ...,
) -> pd.DataFrame: ...
def read_sweep(path: str) -> pd.DataFrame: ...
