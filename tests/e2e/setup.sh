#!/usr/bin/env bash
# Installs the pinned e2e clients on a fresh machine: the Node.js driver, Mongoose and
# mongosh from package-lock.json (npm ci), and PyMongo, Beanie and MongoEngine from requirements.txt
# into tests/e2e/.venv.
# Then `cargo xtask e2e` runs the smoke scripts against a freshly built server.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
echo "e2e clients installed: $(node --version) node, mongosh $(node_modules/.bin/mongosh --version), pymongo $(.venv/bin/python -c 'import pymongo; print(pymongo.version)')"
