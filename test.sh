#!/usr/bin/env bash
# The full test suite. Every package with the race detector; then the interop
# lab (osmo-stp in a qemu guest), verbose so its phase times show. The lab runs
# as root when CI=true or ISUPGW_INTEROP=1, and skips with its reason otherwise.
set -euo pipefail
cd "$(dirname "$0")"
ISUPGW_INTEROP=0 go test -race -count=1 ./...
go test -race -count=1 -v ./test/interop
