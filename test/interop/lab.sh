#!/usr/bin/env bash
# lab.sh: the interop lab. A qemu guest (software emulation) runs the Debian
# kernel and Debian's osmo-stp; it sits in a network namespace of its own,
# linked to that namespace by a tap device, so every address used exists
# only there. Tests run inside the namespace (ip netns exec) and reach
# osmo-stp over raw SCTP and over SCTP encapsulated in UDP (RFC 6951).
#
#   lab.sh build    build the guest from Debian packages into $ISUPGW_LAB_CACHE
#                   (default /var/cache/isupgw-interop); a second run reuses it.
#                   The isupgw binary for the guest is built from this checkout
#                   (CGO_ENABLED=0) onto a disk of its own, rebuilt only when
#                   the Go sources change.
#   lab.sh up       create the namespace, boot the guest, wait for osmo-stp
#   lab.sh down     stop the guest, delete the namespace (idempotent)
#   lab.sh status   what is running, and osmo-stp's view of its ASPs
#   lab.sh vty CMD  run one osmo-stp VTY command and print the answer
#   lab.sh env      the addresses and ports below, as shell assignments
#
# Exit codes: 0 ok, 77 the lab cannot run here (not root, no apt, no
# /dev/net/tun), anything else a failure.
set -euo pipefail

SKIP=77
CACHE=${ISUPGW_LAB_CACHE:-/var/cache/isupgw-interop}
NS=${ISUPGW_LAB_NETNS:-isupgw-lab}
RUN=${ISUPGW_LAB_RUN:-/run/isupgw-lab}
TAP=labtap0
# The addresses exist only inside $NS: the host end of the tap and the guest.
HOST_IP=10.231.0.1
GUEST_IP=10.231.0.2
PREFIX=24
# osmo-stp's M3UA port, the guest kernel's SCTP-over-UDP port, the VTY.
M3UA_PORT=2905
UDP_ENCAP_PORT=9899
VTY_PORT=4239
# SCTP ports the two host ASPs use; osmo-stp tells its ASPs apart by them.
ASP_A_PORT=2911
ASP_B_PORT=2912
# The gateway inside the guest (C): kernel SCTP from the guest's address.
ASP_C_PORT=2913
# An active/standby pair (P1, P2): two ASPs of one AS (as-p, override).
ASP_P1_PORT=2914
ASP_P2_PORT=2915
# Two more gateways with point codes of their own (D, E), for N gateways by
# point code (with A).
ASP_D_PORT=2916
ASP_E_PORT=2917
# Point codes (ITU, 14 bit): gateways A, B and C, the STP; routing contexts.
PC_A=1
PC_B=2
PC_C=3
PC_P=4
PC_D=5
PC_E=6
PC_STP=100
RC_A=1
RC_B=2
RC_C=3
RC_P=4
RC_D=5
RC_E=6
# Gateway C's host API and metrics (/status), on the guest's address.
GW_API_PORT=7703
GW_METRICS_PORT=9703
GW_TOKEN=interop-lab
# Circuits between each pair of gateways.
GW_CICS=1-32
# The VTY is also forwarded to the host's loopback (socat) for people.
HOST_VTY=${ISUPGW_LAB_HOST_VTY:-127.0.0.1:4239}
# So are gateway C's host API and /status (the tests reach them in the netns).
HOST_GW_API=${ISUPGW_LAB_HOST_GW_API:-127.0.0.1:$GW_API_PORT}
HOST_GW_METRICS=${ISUPGW_LAB_HOST_GW_METRICS:-127.0.0.1:$GW_METRICS_PORT}
GUEST_MEM=${ISUPGW_LAB_MEM:-512}
# The guest kernel's SCTP failure detection (net.sctp sysctls; times in ms).
# A gateway killed with SIGKILL on the host side (userspace SCTP over raw IP
# or UDP) sends no ABORT: osmo-stp learns of it only when its kernel gives up
# on the association (RFC 9260 §8.1, §8.3: Association.Max.Retrans
# consecutive unanswered retransmissions or heartbeats). With Linux's
# defaults (HB.interval 30 s, RTO.Max 60 s, 10 retransmissions) that takes
# minutes; telephony signalling tunes them down (RFC 4166), as here.
SCTP_HB_INTERVAL=${ISUPGW_LAB_SCTP_HB_INTERVAL:-500}
SCTP_RTO_MIN=${ISUPGW_LAB_SCTP_RTO_MIN:-200}
SCTP_RTO_INITIAL=${ISUPGW_LAB_SCTP_RTO_INITIAL:-800}
SCTP_RTO_MAX=${ISUPGW_LAB_SCTP_RTO_MAX:-800}
SCTP_MAX_RETRANS=${ISUPGW_LAB_SCTP_MAX_RETRANS:-4}
BOOT_TIMEOUT=${ISUPGW_LAB_BOOT_TIMEOUT:-180} # TCG: 8 s idle, about 60 s on a loaded 2-core host

SELF=$(readlink -f "$0")
REPO=$(cd "$(dirname "$SELF")/../.." && pwd)

log() { printf 'lab: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
skip() { log "skip: $*"; exit "$SKIP"; }
now() { date +%s.%N; }
# phase NAME START: print the time since START.
phase() { awk -v n="$1" -v s="$2" -v e="$(now)" 'BEGIN { printf "lab: phase %-22s %6.1f s\n", n, e - s }' >&2; }

need_root() {
	[[ $(id -u) -eq 0 ]] || skip "needs root (network namespace, tap device, apt); run as root or leave the interop tests skipped"
	[[ -e /dev/net/tun ]] || skip "no /dev/net/tun: cannot create the tap device"
}

need_apt() {
	if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
		skip "needs apt-get and dpkg-deb (a Debian-like host) to build the guest from Debian packages"
	fi
}

# Host tools, installed with apt when missing.
host_tools() {
	local missing=()
	command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
	command -v debootstrap >/dev/null || missing+=(debootstrap)
	dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing+=(busybox-static)
	command -v depmod >/dev/null || missing+=(kmod)
	command -v cpio >/dev/null || missing+=(cpio)
	command -v mkfs.ext4 >/dev/null || missing+=(e2fsprogs)
	command -v ip >/dev/null || missing+=(iproute2)
	command -v socat >/dev/null || missing+=(socat)
	if ((${#missing[@]})); then
		log "installing host packages: ${missing[*]}"
		apt_updated
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
	fi
}

APT_UPDATED=
apt_updated() {
	[[ -n $APT_UPDATED ]] && return
	apt-get update -q >&2
	APT_UPDATED=1
}

# The Debian mirror apt is configured with, for this release; debootstrap
# must use the same one (it may be the only reachable archive).
apt_mirror() {
	local codename=$1 f uri
	# deb822 .sources files
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		uri=$(awk -v c="$codename" '
			BEGIN { RS = ""; FS = "\n" }
			{
				uris = ""; suites = ""; types = ""; enabled = "yes"
				for (i = 1; i <= NF; i++) {
					if ($i ~ /^URIs:/) { uris = $i; sub(/^URIs:[ \t]*/, "", uris) }
					if ($i ~ /^Suites:/) { suites = " " $i " "; sub(/^ Suites:/, " ", suites) }
					if ($i ~ /^Types:/) types = $i
					if ($i ~ /^Enabled:[ \t]*no/) enabled = "no"
				}
				if (enabled == "yes" && types ~ /(^|[ \t])deb([ \t]|$)/ && suites ~ ("[ \t]" c "[ \t]")) {
					split(uris, u, /[ \t]+/); print u[1]; exit
				}
			}' "$f")
		[[ -n $uri ]] && { echo "$uri"; return; }
	done
	# one-line sources.list files
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		uri=$(awk -v c="$codename" '
			$1 == "deb" {
				i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				if ($(i + 1) == c) { print $i; exit }
			}' "$f")
		[[ -n $uri ]] && { echo "$uri"; return; }
	done
	return 1
}

# apt's HTTP proxy, if it has one, for debootstrap's downloads too.
apt_proxy() {
	local p=
	eval "$(apt-config shell p Acquire::http::Proxy)"
	[[ -n $p && $p != DIRECT ]] && echo "$p"
	return 0
}

# --- build ------------------------------------------------------------------

# The kernel: the package linux-image-amd64 points to, unpacked; depmod run.
build_kernel() {
	local dir=$CACHE/kernel pkg kver deb keep
	if [[ -f $dir/ready && $(cat "$dir/modules.key" 2>/dev/null) == "${GUEST_MODULES[*]}" ]]; then
		log "kernel: cached ($(cat "$dir/ready"))"
		return
	fi
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp/x"
	apt_updated
	pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ { print $2; exit }')
	[[ -n $pkg ]] || die "apt-cache depends linux-image-amd64 named no kernel package"
	(cd "$dir.tmp" && apt-get -o APT::Sandbox::User=root download -q "$pkg" >&2)
	deb=$(ls "$dir.tmp"/*.deb)
	dpkg-deb -x "$deb" "$dir.tmp/x"
	kver=$(ls "$dir.tmp/x/lib/modules")
	depmod -b "$dir.tmp/x" "$kver"
	cp "$dir.tmp/x/boot/vmlinuz-$kver" "$dir.tmp/vmlinuz"
	rm -f "$deb"
	# Keep only the modules the guest loads (400 MB less in the cache).
	keep=$(for m in "${GUEST_MODULES[@]}"; do
		modprobe -d "$dir.tmp/x" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
	done | sort -u)
	find "$dir.tmp/x/lib/modules/$kver" -name '*.ko*' | sort | comm -23 - <(echo "$keep") | xargs -r rm -f
	rm -rf "$dir.tmp/x/usr" "$dir.tmp/x/boot"
	depmod -b "$dir.tmp/x" "$kver"
	echo "${GUEST_MODULES[*]}" >"$dir.tmp/modules.key"
	echo "$kver" >"$dir.tmp/kver"
	echo "$pkg $kver" >"$dir.tmp/ready"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	log "kernel: $pkg ($kver)"
}

# The root file system: debootstrap minbase with osmo-stp, as an ext4 image.
# It holds only Debian's files; the lab's configuration comes in the initramfs.
GUEST_PKGS=osmo-stp,kmod,iproute2
build_rootfs() {
	local img=$CACHE/rootfs.img codename mirror proxy key
	# shellcheck disable=SC1091 # the host's file, read at run time
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[[ -n $codename ]] || die "no VERSION_CODENAME in /etc/os-release"
	# The cache holds while the release and the package list stay the same.
	key="$codename $GUEST_PKGS"
	if [[ -f $img && -f $CACHE/rootfs.ready && $(cat "$CACHE/rootfs.key" 2>/dev/null) == "$key" ]]; then
		log "rootfs: cached ($(cat "$CACHE/rootfs.ready"))"
		return
	fi
	rm -f "$CACHE/rootfs.ready"
	mirror=$(apt_mirror "$codename") || die "no apt source for $codename in /etc/apt/sources.list{,.d}"
	proxy=$(apt_proxy)
	log "rootfs: debootstrap --variant=minbase $codename from $mirror${proxy:+ via proxy $proxy}"
	rm -rf "$CACHE/rootfs.tmp" "$img.tmp"
	mkdir -p "$CACHE/rootfs.tmp"
	env ${proxy:+http_proxy=$proxy} debootstrap --variant=minbase --include="$GUEST_PKGS" \
		"$codename" "$CACHE/rootfs.tmp" "$mirror" >"$CACHE/debootstrap.log" 2>&1 ||
		{ tail -30 "$CACHE/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
	chroot "$CACHE/rootfs.tmp" apt-get clean
	rm -rf "$CACHE/rootfs.tmp"/var/lib/apt/lists/*
	[[ -x $CACHE/rootfs.tmp/usr/bin/osmo-stp ]] || die "osmo-stp missing from the rootfs"
	local ver
	# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
	ver=$(chroot "$CACHE/rootfs.tmp" dpkg-query -W -f '${Version}' osmo-stp)
	mkfs.ext4 -q -F -L isupgw-lab -d "$CACHE/rootfs.tmp" "$img.tmp" 512M
	mv "$img.tmp" "$img"
	rm -rf "$CACHE/rootfs.tmp"
	echo "$codename osmo-stp $ver" >"$CACHE/rootfs.ready"
	echo "$key" >"$CACHE/rootfs.key"
	log "rootfs: osmo-stp $ver"
}

# Gateway C: the isupgw binary of this checkout (static: the guest has only
# Debian's libc) and its configuration on an ext4 disk of their own, so a
# change in the Go sources rebuilds this disk and nothing else. The key is
# the Go version and the hash of every non-test Go file, go.mod and go.sum,
# and the configuration; ISUPGW_LAB_GUEST_BIN names a ready binary instead.
build_gateway() {
	local img=$CACHE/isupgw.img dir=$CACHE/isupgw.tmp key bin=${ISUPGW_LAB_GUEST_BIN:-}
	if [[ -n $bin ]]; then
		key="bin $(sha256sum <"$bin" | cut -d' ' -f1)"
	else
		command -v go >/dev/null || die "go is needed to build the guest's isupgw (or set ISUPGW_LAB_GUEST_BIN)"
		key="src $(go env GOVERSION) $(cd "$REPO" && find . -path ./.git -prune -o -path ./test -prune -o \
			\( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -type f -print0 |
			LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
	fi
	key="$key cfg $(write_gateway_config | sha256sum | cut -d' ' -f1)"
	if [[ -f $img && $(cat "$CACHE/isupgw.key" 2>/dev/null) == "$key" ]]; then
		log "gateway: cached (${key%% cfg*})"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	if [[ -n $bin ]]; then
		cp "$bin" "$dir/isupgw"
	else
		(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -o "$dir/isupgw" ./cmd/isupgw) ||
			die "go build ./cmd/isupgw for the guest failed"
	fi
	write_gateway_config >"$dir/isupgw.yaml"
	mkfs.ext4 -q -F -L isupgw-gw -d "$dir" "$img.tmp" 64M >/dev/null
	mv "$img.tmp" "$img"
	echo "$key" >"$CACHE/isupgw.key"
	rm -rf "$dir"
	log "gateway: isupgw disk built (${key%% cfg*})"
}

# Gateway C's configuration: the ASP of as-c over kernel SCTP, from a fixed
# SCTP port (osmo-stp matches its ASPs by it), with circuits to gateway A.
write_gateway_config() {
	cat <<EOF
point_code: $PC_C
m3ua:
  role: asp
  transport: kernel
  local: $GUEST_IP:$ASP_C_PORT
  peers:
    - {name: stp, connect: "$GUEST_IP:$M3UA_PORT", routing_contexts: [$RC_C], traffic_mode: override, point_codes: [$PC_A]}
circuit_groups:
  - {name: a, point_code: $PC_A, cics: ["$GW_CICS"]}
reset_on_resume: true
host_api: {tcp: "$GUEST_IP:$GW_API_PORT", token: $GW_TOKEN}
metrics: "$GUEST_IP:$GW_METRICS_PORT"
log: {level: info, format: json}
EOF
}

# Modules the guest loads before it mounts its root, in dependency order.
GUEST_MODULES=(virtio_pci virtio_blk virtio_net ext4 crc32c_generic libcrc32c udp_tunnel ip6_udp_tunnel sctp)

# The initramfs: static busybox, the modules, /init, the osmo-stp config and
# the guest's init script. Cheap, so rebuilt by every build.
build_initramfs() {
	local kver dir=$CACHE/initramfs.tmp m line path
	kver=$(cat "$CACHE/kernel/kver")
	rm -rf "$dir"
	mkdir -p "$dir"/{bin,dev,proc,sys,newroot,lib/modules,lab}
	cp /bin/busybox "$dir/bin/busybox"
	local -A seen=()
	: >"$dir/lab/modules"
	for m in "${GUEST_MODULES[@]}"; do
		while read -r line; do
			case $line in
			insmod\ *) path=${line#insmod }; path=${path%% *} ;;
			*) continue ;; # builtin
			esac
			[[ -n ${seen[$path]:-} ]] && continue
			seen[$path]=1
			local base
			base=$(basename "$path")
			case $base in
			*.ko.xz) xz -dc "$path" >"$dir/lib/modules/${base%.xz}"; base=${base%.xz} ;;
			*.ko.zst) zstd -qdc "$path" >"$dir/lib/modules/${base%.zst}"; base=${base%.zst} ;;
			*) cp "$path" "$dir/lib/modules/$base" ;;
			esac
			echo "$base" >>"$dir/lab/modules"
		done < <(modprobe -d "$CACHE/kernel/x" -S "$kver" --show-depends "$m")
	done
	write_guest_init >"$dir/init"
	chmod +x "$dir/init"
	write_guest_run >"$dir/lab/run"
	write_stp_config >"$dir/lab/osmo-stp.cfg"
	(cd "$dir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$CACHE/initramfs.img.tmp"
	mv "$CACHE/initramfs.img.tmp" "$CACHE/initramfs.img"
	log "initramfs: $(du -h "$CACHE/initramfs.img" | cut -f1), modules: $(paste -sd' ' "$dir/lab/modules")"
	rm -rf "$dir"
}

# /init in the initramfs: load modules, SCTP-over-UDP sysctls, network,
# mount the root read-only with a tmpfs /run holding the lab files.
write_guest_init() {
	cat <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "lab-init: loading modules"
for m in \$(cat /lab/modules); do insmod /lib/modules/\$m || echo "lab-init: insmod \$m failed"; done
echo $UDP_ENCAP_PORT > /proc/sys/net/sctp/udp_port
echo $UDP_ENCAP_PORT > /proc/sys/net/sctp/encap_port
echo $SCTP_HB_INTERVAL > /proc/sys/net/sctp/hb_interval
echo $SCTP_RTO_MIN > /proc/sys/net/sctp/rto_min
echo $SCTP_RTO_MAX > /proc/sys/net/sctp/rto_max
echo $SCTP_RTO_INITIAL > /proc/sys/net/sctp/rto_initial
echo $SCTP_MAX_RETRANS > /proc/sys/net/sctp/association_max_retrans
echo $SCTP_MAX_RETRANS > /proc/sys/net/sctp/path_max_retrans
echo "lab-init: sctp udp_port=\$(cat /proc/sys/net/sctp/udp_port) encap_port=\$(cat /proc/sys/net/sctp/encap_port)"
echo "lab-init: sctp hb_interval=\$(cat /proc/sys/net/sctp/hb_interval) rto_min=\$(cat /proc/sys/net/sctp/rto_min) rto_max=\$(cat /proc/sys/net/sctp/rto_max) max_retrans=\$(cat /proc/sys/net/sctp/association_max_retrans)"
ip link set lo up
ip link set eth0 up
ip addr add $GUEST_IP/$PREFIX dev eth0
i=0
while [ ! -b /dev/vda ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done
mount -t ext4 -o ro /dev/vda /newroot || { echo "lab-init: cannot mount root"; echo o > /proc/sysrq-trigger; }
mount -t tmpfs -o mode=0755 tmpfs /newroot/run
mount -t tmpfs tmpfs /newroot/tmp
cp /lab/run /lab/osmo-stp.cfg /newroot/run/
mkdir /newroot/run/gw
mount -t ext4 -o ro /dev/vdb /newroot/run/gw || echo "lab-init: no gateway disk"
echo "lab-init: uptime \$(cat /proc/uptime); \$(dmesg | grep -i crng)"
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /bin/sh /run/run
EOF
}

# PID 1 in the guest's root: osmo-stp, then gateway C once osmo-stp listens
# (its SCTP endpoint shows in /proc/net/sctp/eps), and power off if
# osmo-stp ends. Gateway C logs to the console with the prefix "gw-c: ".
write_guest_run() {
	cat <<EOF
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
echo "lab-run: starting osmo-stp at uptime \$(cat /proc/uptime)"
cd /run
/usr/bin/osmo-stp -c /run/osmo-stp.cfg &
stp=\$!
if [ -x /run/gw/isupgw ]; then
	i=0
	while ! awk '\$6 == $M3UA_PORT { found = 1 } END { exit !found }' /proc/net/sctp/eps && [ \$i -lt 600 ]; do
		sleep 0.1
		i=\$((i + 1))
	done
	echo "lab-run: starting isupgw (gateway C) at uptime \$(cat /proc/uptime)"
	(/run/gw/isupgw run --config /run/gw/isupgw.yaml 2>&1; echo "isupgw exited with status \$?") | sed -u 's/^/gw-c: /' &
fi
wait \$stp
echo "lab-run: osmo-stp exited with status \$?"
echo o > /proc/sysrq-trigger
EOF
}

# osmo-stp: one cs7 instance, AS A (PC 1, RC 1), AS B (PC 2, RC 2) and AS C
# (PC 3, RC 3), AS D (PC 5, RC 5) and AS E (PC 6, RC 6), one ASP each, and
# AS P (PC 4, RC 4) with two ASPs in override mode (an active/standby pair),
# told apart by the SCTP port; routes to all.
write_stp_config() {
	cat <<EOF
log stderr
 logging filter all 1
 logging color 0
 logging print category-hex 0
 logging print category 1
 logging timestamp 1
 logging print file 0
 logging level set-all notice
 logging level lss7 info
 logging level lm3ua info
 logging level linp info
line vty
 no login
 bind 0.0.0.0 $VTY_PORT
cs7 instance 0
 point-code format 24
 point-code $PC_STP
 asp asp-a $ASP_A_PORT $M3UA_PORT m3ua
  remote-ip $HOST_IP
  local-ip $GUEST_IP
  role sg
  sctp-role server
 asp asp-b $ASP_B_PORT $M3UA_PORT m3ua
  remote-ip $HOST_IP
  local-ip $GUEST_IP
  role sg
  sctp-role server
 asp asp-c $ASP_C_PORT $M3UA_PORT m3ua
  remote-ip $GUEST_IP
  local-ip $GUEST_IP
  role sg
  sctp-role server
 asp asp-p1 $ASP_P1_PORT $M3UA_PORT m3ua
  remote-ip $HOST_IP
  local-ip $GUEST_IP
  role sg
  sctp-role server
 asp asp-p2 $ASP_P2_PORT $M3UA_PORT m3ua
  remote-ip $HOST_IP
  local-ip $GUEST_IP
  role sg
  sctp-role server
 asp asp-d $ASP_D_PORT $M3UA_PORT m3ua
  remote-ip $HOST_IP
  local-ip $GUEST_IP
  role sg
  sctp-role server
 asp asp-e $ASP_E_PORT $M3UA_PORT m3ua
  remote-ip $HOST_IP
  local-ip $GUEST_IP
  role sg
  sctp-role server
 as as-a m3ua
  asp asp-a
  routing-key $RC_A $PC_A
  traffic-mode override
 as as-b m3ua
  asp asp-b
  routing-key $RC_B $PC_B
  traffic-mode override
 as as-c m3ua
  asp asp-c
  routing-key $RC_C $PC_C
  traffic-mode override
 as as-p m3ua
  asp asp-p1
  asp asp-p2
  routing-key $RC_P $PC_P
  traffic-mode override
 as as-d m3ua
  asp asp-d
  routing-key $RC_D $PC_D
  traffic-mode override
 as as-e m3ua
  asp asp-e
  routing-key $RC_E $PC_E
  traffic-mode override
 route-table system
  update route $PC_A 16777215 linkset as-a
  update route $PC_B 16777215 linkset as-b
  update route $PC_C 16777215 linkset as-c
  update route $PC_P 16777215 linkset as-p
  update route $PC_D 16777215 linkset as-d
  update route $PC_E 16777215 linkset as-e
 listen m3ua $M3UA_PORT
  local-ip $GUEST_IP
EOF
}

cmd_build() {
	need_root
	need_apt
	local t0 t
	t0=$(now)
	mkdir -p "$CACHE"
	t=$(now); host_tools; phase "host packages" "$t"
	t=$(now); build_kernel; phase "kernel" "$t"
	t=$(now); build_rootfs; phase "rootfs" "$t"
	t=$(now); build_initramfs; phase "initramfs" "$t"
	t=$(now); build_gateway; phase "gateway C (isupgw)" "$t"
	phase "build total" "$t0"
}

# --- up / down --------------------------------------------------------------

in_ns() { ip netns exec "$NS" "$@"; }

vty_probe() {
	# From inside the namespace: the VTY banner names OsmoSTP. (socat with
	# an empty stdin is no probe: osmo-stp may see EOF before it writes.)
	in_ns timeout 3 bash -c "exec 3<>/dev/tcp/$GUEST_IP/$VTY_PORT && head -c 120 <&3" 2>/dev/null | grep -aq OsmoSTP
}

cmd_up() {
	need_root
	[[ -f $CACHE/initramfs.img && -f $CACHE/rootfs.img && -f $CACHE/kernel/vmlinuz && -f $CACHE/isupgw.img ]] ||
		die "no guest in $CACHE: run '$SELF build' first"
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run '$SELF build' first"
	cmd_down quiet
	trap 'cmd_down quiet' EXIT
	local t0
	t0=$(now)
	mkdir -p "$RUN"
	ip netns add "$NS"
	in_ns ip link set lo up
	in_ns ip tuntap add dev "$TAP" mode tap
	in_ns ip addr add "$HOST_IP/$PREFIX" dev "$TAP"
	in_ns ip link set "$TAP" up
	# qemu in the namespace: it opens the tap there. The root image is
	# opened with snapshot=on so the cached image is never written.
	# qboot starts the kernel faster than SeaBIOS; no option ROM on the NIC.
	local fw=()
	[[ -f /usr/share/qemu/qboot.rom ]] && fw=(-bios /usr/share/qemu/qboot.rom)
	in_ns qemu-system-x86_64 -accel tcg -machine q35 -cpu max -smp 1 -m "$GUEST_MEM" "${fw[@]}" \
		-nographic -no-reboot -nodefaults -serial stdio -monitor none \
		-kernel "$CACHE/kernel/vmlinuz" -initrd "$CACHE/initramfs.img" \
		-append "console=ttyS0 panic=-1 loglevel=5 printk.time=1" \
		-drive "file=$CACHE/rootfs.img,if=virtio,format=raw,snapshot=on" \
		-drive "file=$CACHE/isupgw.img,if=virtio,format=raw,readonly=on" \
		-netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no" \
		-device virtio-net-pci,netdev=n0,romfile= \
		-pidfile "$RUN/qemu.pid" \
		</dev/null >"$RUN/console.log" 2>&1 &
	local qpid=$! deadline
	echo "$qpid" >"$RUN/qemu.launcher.pid"
	deadline=$(($(date +%s) + BOOT_TIMEOUT))
	local booted=
	while (($(date +%s) < deadline)); do
		if ! kill -0 "$qpid" 2>/dev/null; then
			tail -40 "$RUN/console.log" >&2
			die "qemu exited during boot (console: $RUN/console.log)"
		fi
		if [[ -z $booted ]] && grep -aq 'lab-run: starting osmo-stp' "$RUN/console.log"; then
			booted=1
			phase "boot" "$t0"
		fi
		if [[ -n $booted ]] && vty_probe; then
			phase "osmo-stp ready" "$t0"
			forward vty "$HOST_VTY" "$VTY_PORT"
			forward gw-api "$HOST_GW_API" "$GW_API_PORT"
			forward gw-metrics "$HOST_GW_METRICS" "$GW_METRICS_PORT"
			log "VTY: telnet ${HOST_VTY/:/ } (host) or $GUEST_IP $VTY_PORT (in netns $NS)"
			log "gateway C: host API $HOST_GW_API, status http://$HOST_GW_METRICS/status (host) or $GUEST_IP (in netns $NS)"
			trap - EXIT
			return 0
		fi
		sleep 0.5
	done
	tail -40 "$RUN/console.log" >&2
	die "osmo-stp did not answer on its VTY within ${BOOT_TIMEOUT}s (console: $RUN/console.log)"
}

# forward NAME HOSTADDR GUESTPORT: a guest TCP port on the host's loopback
# (for people); each connection enters the namespace.
forward() {
	local name=$1 addr=${2%:*} port=${2##*:} guest_port=$3
	socat "TCP-LISTEN:$port,bind=$addr,reuseaddr,fork" \
		"EXEC:ip netns exec $NS socat STDIO TCP\\:$GUEST_IP\\:$guest_port" \
		</dev/null >"$RUN/$name-forward.log" 2>&1 &
	echo $! >"$RUN/$name-forward.pid"
}

kill_pidfile() {
	local f=$1 pid i
	[[ -f $f ]] || return 0
	pid=$(cat "$f")
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

cmd_down() {
	[[ $(id -u) -eq 0 ]] || skip "needs root"
	local f
	for f in vty gw-api gw-metrics; do
		kill_pidfile "$RUN/$f-forward.pid"
	done
	kill_pidfile "$RUN/qemu.pid"
	kill_pidfile "$RUN/qemu.launcher.pid"
	if ip netns list 2>/dev/null | grep -qw "^$NS"; then
		ip netns delete "$NS"
	fi
	[[ ${1:-} == quiet ]] || log "down"
}

# --- status -----------------------------------------------------------------

vty_cmd() {
	# Commands on stdin, one VTY session; the answer on stdout.
	{ printf '%s\r\n' "$@"; sleep 1; } | in_ns timeout 5 socat -T3 - "TCP:$GUEST_IP:$VTY_PORT" | tr -d '\r' | LC_ALL=C tr -cd '\11\12\40-\176'
}

cmd_status() {
	local up=0
	if ip netns list 2>/dev/null | grep -qw "^$NS"; then
		echo "netns: $NS"
		up=1
	else
		echo "netns: absent"
	fi
	if [[ -f $RUN/qemu.pid ]] && kill -0 "$(cat "$RUN/qemu.pid")" 2>/dev/null; then
		echo "qemu: running, pid $(cat "$RUN/qemu.pid"), console $RUN/console.log"
	else
		echo "qemu: not running"
		up=0
	fi
	echo "cache: $CACHE ($(cat "$CACHE/kernel/ready" 2>/dev/null || echo no kernel); $(cat "$CACHE/rootfs.ready" 2>/dev/null || echo no rootfs))"
	if ((up)); then
		vty_cmd "show cs7 instance 0 asp" "show cs7 instance 0 as all"
		echo "gateway C /status:"
		# shellcheck disable=SC2016 # expanded by the inner shell
		in_ns timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" && printf "GET /status HTTP/1.0\r\n\r\n" >&3 && cat <&3' _ "$GUEST_IP" "$GW_METRICS_PORT" |
			sed '1,/^\r\{0,1\}$/d' || echo "(no answer)"
		echo
	fi
	((up))
}

cmd_env() {
	cat <<EOF
LAB_NETNS=$NS
LAB_HOST_IP=$HOST_IP
LAB_GUEST_IP=$GUEST_IP
LAB_M3UA_PORT=$M3UA_PORT
LAB_UDP_ENCAP_PORT=$UDP_ENCAP_PORT
LAB_VTY_PORT=$VTY_PORT
LAB_ASP_A_PORT=$ASP_A_PORT
LAB_ASP_B_PORT=$ASP_B_PORT
LAB_ASP_C_PORT=$ASP_C_PORT
LAB_ASP_P1_PORT=$ASP_P1_PORT
LAB_ASP_P2_PORT=$ASP_P2_PORT
LAB_ASP_D_PORT=$ASP_D_PORT
LAB_ASP_E_PORT=$ASP_E_PORT
LAB_PC_A=$PC_A
LAB_PC_B=$PC_B
LAB_PC_C=$PC_C
LAB_PC_P=$PC_P
LAB_PC_D=$PC_D
LAB_PC_E=$PC_E
LAB_PC_STP=$PC_STP
LAB_RC_A=$RC_A
LAB_RC_B=$RC_B
LAB_RC_C=$RC_C
LAB_RC_P=$RC_P
LAB_RC_D=$RC_D
LAB_RC_E=$RC_E
LAB_GW_API_PORT=$GW_API_PORT
LAB_GW_METRICS_PORT=$GW_METRICS_PORT
LAB_GW_TOKEN=$GW_TOKEN
LAB_GW_CICS=$GW_CICS
LAB_RUN=$RUN
LAB_CACHE=$CACHE
LAB_SCTP_HB_INTERVAL=$SCTP_HB_INTERVAL
LAB_SCTP_RTO_MIN=$SCTP_RTO_MIN
LAB_SCTP_RTO_MAX=$SCTP_RTO_MAX
LAB_SCTP_MAX_RETRANS=$SCTP_MAX_RETRANS
EOF
}

case ${1:-} in
build) cmd_build ;;
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
vty) shift; need_root; vty_cmd "$@" ;;
env) cmd_env ;;
*)
	sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
