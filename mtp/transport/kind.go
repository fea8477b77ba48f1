package transport

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// Kind names a transport.
type Kind int

// Transports.
const (
	KindAuto Kind = iota
	KindKernel
	KindUDP
	KindRaw
)

func (k Kind) String() string {
	switch k {
	case KindAuto:
		return "auto"
	case KindKernel:
		return "kernel"
	case KindUDP:
		return "udp"
	case KindRaw:
		return "raw"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind reads "auto", "kernel", "udp" or "raw".
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return KindAuto, nil
	case "kernel":
		return KindKernel, nil
	case "udp":
		return KindUDP, nil
	case "raw":
		return KindRaw, nil
	}
	return 0, fmt.Errorf("%w: %q (want auto, kernel, udp or raw)", ErrUnknownKind, s)
}

// Resolve turns KindAuto into the concrete transport this host supports and
// reports why, so callers can log the choice.
func Resolve(k Kind) (Kind, string) {
	if k != KindAuto {
		return k, "configured"
	}
	if err := KernelAvailable(); err != nil {
		return KindUDP, "kernel SCTP unavailable: " + err.Error()
	}
	return KindKernel, "kernel SCTP available"
}

// Dial opens an association to remote (IP and port; for udp the port is the
// UDP port and, unless WithSCTPPorts says otherwise, also the SCTP port).
func Dial(ctx context.Context, k Kind, remote netip.AddrPort, opts ...Option) (Conn, error) {
	o := buildOptions(opts)
	k, why := Resolve(k)
	if o.onResolve != nil {
		o.onResolve(k, why)
	}
	switch k {
	case KindKernel:
		return dialKernel(ctx, remote, o)
	case KindUDP:
		return dialUDP(ctx, remote, o)
	case KindRaw:
		return dialRaw(ctx, remote, o)
	}
	return nil, ErrUnknownKind
}

// Listen accepts associations on local.
func Listen(k Kind, local netip.AddrPort, opts ...Option) (Listener, error) {
	o := buildOptions(opts)
	k, why := Resolve(k)
	if o.onResolve != nil {
		o.onResolve(k, why)
	}
	switch k {
	case KindKernel:
		return listenKernel(local, o)
	case KindUDP:
		return listenUDP(local, o)
	case KindRaw:
		return listenRaw(local, o)
	}
	return nil, ErrUnknownKind
}
