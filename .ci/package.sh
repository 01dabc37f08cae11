#!/usr/bin/env bash
# `cargo package` for every publishable crate of the workspace (everything but xtask),
# so that a crate that cannot be published (a path dependency without a version, a file
# outside the package, a missing README) fails CI instead of the release.
#
# `cargo package --workspace` (stable since cargo 1.89) packages the members together:
# a member that depends on another is resolved against the other's freshly made .crate
# through a temporary local registry overlay, so dp-optim packages before dp-models is on
# crates.io.
#
# --no-verify: verifying builds each .crate against its dependencies from crates.io,
# which needs the network (or a warm cache) and compiles the whole workspace a second
# time; the contents and the manifests are still checked. Set PACKAGE_VERIFY=1 to build
# them too (e.g. `PACKAGE_VERIFY=1 .ci/package.sh` on a machine with the network).
#
# --allow-dirty: CI may run in a checkout with generated files; what is packaged is what
# is in the working tree, which is what the other CI steps test.
set -euo pipefail
cd "$(dirname "$0")/.."

verify=(--no-verify)
if [[ "${PACKAGE_VERIFY:-0}" == "1" ]]; then
    verify=()
fi

echo "== cargo package --workspace --exclude xtask --exclude dp-erm-python ${verify[*]}"
# dp-erm-python is a Python package (built and published by maturin, not crates.io).
cargo package --workspace --exclude xtask --exclude dp-erm-python --allow-dirty "${verify[@]}"

# Each library crate's .crate must exist and hold its manifest with version requirements
# (not bare paths) on its workspace dependencies.
version=$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json,sys; m=json.load(sys.stdin); print(next(p["version"] for p in m["packages"] if p["name"]=="dp-models"))')
for crate in $(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json,sys; m=json.load(sys.stdin); print(" ".join(p["name"] for p in m["packages"] if p["publish"] != [] and p["name"] != "dp-erm-python"))'); do
    file="target/package/${crate}-${version}.crate"
    if [[ ! -f "$file" ]]; then
        echo "error: $file was not made" >&2
        exit 1
    fi
    if ! tar -xzOf "$file" "${crate}-${version}/Cargo.toml" | python3 -c '
import sys, tomllib
m = tomllib.loads(sys.stdin.read())
tables = [m.get(k, {}) for k in ("dependencies", "dev-dependencies", "build-dependencies")]
bad = [n for t in tables for n, d in t.items() if isinstance(d, dict) and "path" in d]
sys.exit(1 if bad else 0)'; then
        echo "error: $file's manifest still has a path dependency" >&2
        exit 1
    fi
    echo "ok: $file ($(du -h "$file" | cut -f1))"
done
