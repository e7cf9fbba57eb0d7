#!/usr/bin/env bash
# Every test: the Rust workspace (`cargo test --release --workspace`), then
# the Python package's (pytest), in a virtual environment at .venv that
# this creates on first use with the package's build and test
# dependencies (maturin, pandas, pyarrow, dask.distributed, pytest,
# matplotlib), the package built from python/ into it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --workspace
venv=$(realpath -m "${WBSIM_VENV:-.venv}")
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
"$venv/bin/python" -m pip install -q "maturin>=1.5,<2" "pandas>=1.5" "pyarrow>=10" \
    "dask[distributed]>=2023.1" "pytest>=7" "matplotlib>=3.5"
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --release -q -m python/Cargo.toml
"$venv/bin/python" -m pytest -q python/tests
