import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent


@pytest.fixture
def small():
    """Path of the small test scenario."""
    return str(HERE / "data" / "small.toml")


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def wbsim_bin():
    """The CLI binary built by `cargo test --release` / `cargo build --release`."""
    p = ROOT / "target" / "release" / "wbsim"
    if not p.exists():
        pytest.skip("target/release/wbsim not built")
    return str(p)


os.environ.setdefault("MPLBACKEND", "Agg")
