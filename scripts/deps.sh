#!/usr/bin/env bash
# Installs the Debian packages Anvil needs to build, test and run, when run as root;
# otherwise prints the exact apt-get line. Every package comes from Debian's archive.
#   build:   gcc/make (build-essential), pkg-config and the libraries of DESIGN §2; libinih,
#            which reads both daemons' configuration file (/etc/anvil/anvil.conf);
#            libhttp-parser-dev, which parses the requests anvil-egress proxies
#   jail:    Debian's python3 with the data stack (pandas, numpy, matplotlib, and what a tool
#            over CSVs reaches for: scipy, openpyxl for Excel, lxml, jinja2, yaml); `file`,
#            which platform.architecture() runs (pre-warmed by the supervisor)
#   tests:   python3-tk (Tcl, whose `exec` forks in C: the break-it panel's process attempt
#            that only the kernel sees, web/breakit/process_kernel.py); libcmocka-dev, jq (JSON in
#            the end-to-end tests), python3-requests (a tool's other HTTP client, through a granted
#            run's proxy: t_egress_jail.sh), openssl (a self-signed
#            certificate for the model client's TLS test); nodejs and npm, for the official MCP
#            SDK's client that tests anvil-mcp (tests/mcp: `npm ci` from its lock); curl (the HTTP client of the web UI's tests),
#            chromium (the page's browser tests: Debian's Chromium, headless, driven by
#            playwright-core from npm, tests/browser/)
#   bench:   bubblewrap (the anchor Anvil is measured against; the plots use python3-matplotlib)
#   install: help2man (`make install` writes the three programs' man pages from their --help)
#   clients: python3-msgpack, the one package the Python client (clients/python) uses beyond
#            the standard library: the broker's frames are msgpack
set -u
PKGS=(
        build-essential pkg-config
        libuv1-dev libmsgpack-dev libpython3-dev libseccomp-dev libcap-dev
        libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev libcmocka-dev
        libmd-dev libinih-dev libhttp-parser-dev
        python3 python3-pandas python3-numpy python3-matplotlib
        python3-scipy python3-openpyxl python3-lxml python3-jinja2 python3-yaml file python3-tk
        jq openssl bubblewrap help2man nodejs curl chromium
        python3-msgpack python3-requests
)
# Debian's nodejs comes without npm (its package npm); a nodejs that brings its own (as
# NodeSource's does, which conflicts with Debian's npm) needs none.
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
# One look at the package database (dpkg-query, no apt-get, no network): silent when every
# package is installed. Otherwise one line naming what is missing, then (as root) apt-get
# update and install of those alone. `make check NODEPS=1` does not even look.
missing=()
declare -A ok=()
while read -r name status; do
        [ "$status" = "install ok installed" ] && ok[$name]=1
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${PKGS[@]}" 2>/dev/null)
for p in "${PKGS[@]}"; do
        [ -n "${ok[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
        echo "deps: missing ${missing[*]}; as root, run: apt-get install -y ${missing[*]}"
        exit 1
fi
echo "deps: missing ${missing[*]}: installing them (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || exit 1
apt-get install -y -qq "${missing[@]}" >/dev/null || exit 1
