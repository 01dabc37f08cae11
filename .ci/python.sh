#!/usr/bin/env bash
# Python CI: a fresh venv, the package installed the README's way (pip builds the Rust
# extension with cargo, release profile), then pytest over crates/dp-erm-python/tests.
# Called from .ci/run; runnable alone: `bash .ci/python.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${DP_ERM_CI_VENV:-target/ci-python-venv}
start=$(date +%s)
echo "== python: fresh venv at $VENV ($($PY --version))"
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
echo "== python: pip install ./crates/dp-erm-python (the README's command)"
"$VENV/bin/python" -m pip install --quiet ./crates/dp-erm-python
"$VENV/bin/python" -m pip install --quiet pytest pandas
echo "== python: import check"
(cd /tmp && "$OLDPWD/$VENV/bin/python" -c "import dp_erm; print('dp_erm', dp_erm.__file__)")
echo "== python: pytest (installed package, not the source tree)"
# --import-mode=importlib and running from the tests directory keep the source tree's
# python/ off sys.path, so the tests exercise what pip installed.
"$VENV/bin/python" -m pytest -q -p no:cacheprovider --import-mode=importlib \
    crates/dp-erm-python/tests
echo "== python: done in $(( $(date +%s) - start )) s"
