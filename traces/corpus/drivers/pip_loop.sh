#!/bin/sh
# A package manager: a virtual environment made on the file system, then ROUNDS of pip
# installing a set of packages (sympy, pygments, docutils, jinja2, requests and their
# dependencies: thousands of small files, byte-compiled), a sync (as a package manager
# that syncs what it installed does, dpkg for one: without it most of each install is
# deleted before writeback reaches the device), and uninstalling them again, from a local
# folder of wheels (no network): WHEELHOUSE, made beforehand with
# `pip download -d WHEELHOUSE sympy pygments docutils jinja2 requests`.
#
# usage: WHEELHOUSE=/path/to/wheels sh pip_loop.sh [ROUNDS]
set -eu
ROUNDS=${1:-3}
PACKAGES="sympy pygments docutils jinja2 requests"
python3 -m venv venv
i=0
while [ "$i" -lt "$ROUNDS" ]; do
    venv/bin/pip install -q --no-index --find-links "$WHEELHOUSE" $PACKAGES
    sync
    venv/bin/pip freeze | cut -d= -f1 | xargs venv/bin/pip uninstall -q -y
    i=$((i + 1))
done
echo "$ROUNDS rounds"
