#!/bin/sh
# Lays out the container's root file system under ROOT: the directories the
# gateway needs at run time, owned by the unprivileged user it runs as. The
# Dockerfile's build stage runs it; deploy/container's Go test runs it too and
# then runs the binary as that user in the tree, so the layout is tested
# without a container engine.
#
#   layout.sh ROOT        (as root; ISUPGW_UID / ISUPGW_GID: default 65532)
set -eu
root=${1:?usage: layout.sh ROOT}
uid=${ISUPGW_UID:-65532}
gid=${ISUPGW_GID:-65532}

install -d -m 0755 "$root/etc/isupgw" "$root/usr/local/bin"
install -d -m 1777 "$root/tmp"
# /run/isupgw: the host API's Unix socket. /var/lib/isupgw: the state file
# (locally blocked circuits) and Code Red's dumps; a volume in the container.
install -d -m 0750 -o "$uid" -g "$gid" "$root/run/isupgw" "$root/var/lib/isupgw"
printf 'root:x:0:0:root:/root:/sbin/nologin\nisupgw:x:%s:%s:isupgw:/var/lib/isupgw:/sbin/nologin\n' "$uid" "$gid" >"$root/etc/passwd"
printf 'root:x:0:\nisupgw:x:%s:\n' "$gid" >"$root/etc/group"
chmod 0644 "$root/etc/passwd" "$root/etc/group"
