#!/bin/sh
# The container's build stage: a static binary and the root file system it
# runs in, under OUT/rootfs. The Dockerfile runs it; deploy/container's Go
# test runs it as well (CI has no container engine), then runs the binary
# from that tree as the unprivileged user.
#
#   build.sh OUT          (from the repository root; VERSION, COMMIT: -X values)
set -eu
out=${1:?usage: build.sh OUT}
here=$(dirname "$0")
export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local}
go build -trimpath -ldflags="-s -w -X main.version=${VERSION:-} -X main.commit=${COMMIT:-}" -o "$out/isupgw" ./cmd/isupgw
sh "$here/layout.sh" "$out/rootfs"
install -m 0755 "$out/isupgw" "$out/rootfs/usr/local/bin/isupgw"
install -m 0644 examples/isupgw.yaml "$out/rootfs/etc/isupgw/isupgw.yaml"
