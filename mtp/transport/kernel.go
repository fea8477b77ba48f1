package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ishidawataru/sctp"
)

var (
	kernelOnce sync.Once
	kernelErr  error
)

// KernelAvailable probes once for kernel SCTP by opening and closing an SCTP
// socket. It returns ErrKernelSCTPUnavailable (wrapping the errno) if absent.
func KernelAvailable() error {
	kernelOnce.Do(func() {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, ipProtoSCTP)
		if err != nil {
			kernelErr = fmt.Errorf("%w: %w", ErrKernelSCTPUnavailable, err)
			return
		}
		_ = syscall.Close(fd)
	})
	return kernelErr
}

func sctpAddr(a netip.AddrPort) *sctp.SCTPAddr {
	return &sctp.SCTPAddr{IPAddrs: []net.IPAddr{{IP: a.Addr().AsSlice()}}, Port: int(a.Port())}
}

func dialKernel(ctx context.Context, remote netip.AddrPort, o *options) (Conn, error) {
	if err := KernelAvailable(); err != nil {
		return nil, err
	}
	var laddr *sctp.SCTPAddr
	if o.local.IsValid() {
		laddr = sctpAddr(o.local)
	}
	type res struct {
		c   *sctp.SCTPConn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := sctp.DialSCTPExt("sctp", laddr, sctpAddr(remote),
			sctp.InitMsg{NumOstreams: o.streams, MaxInstreams: o.streams})
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return newKernelConn(r.c, o)
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				_ = r.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

type kernelListener struct {
	ln *sctp.SCTPListener
	o  *options
}

func listenKernel(local netip.AddrPort, o *options) (Listener, error) {
	if err := KernelAvailable(); err != nil {
		return nil, err
	}
	ln, err := sctp.ListenSCTPExt("sctp", sctpAddr(local),
		sctp.InitMsg{NumOstreams: o.streams, MaxInstreams: o.streams})
	if err != nil {
		return nil, err
	}
	return &kernelListener{ln: ln, o: o}, nil
}

func (l *kernelListener) Accept(ctx context.Context) (Conn, error) {
	stop := context.AfterFunc(ctx, func() { _ = l.ln.Close() })
	defer stop()
	c, err := l.ln.AcceptSCTP()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return newKernelConn(c, l.o)
}

func (l *kernelListener) Addr() netip.AddrPort { return addrPortOf(l.ln.Addr()) }
func (l *kernelListener) Close() error         { return l.ln.Close() }

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Released: a kernel listener frees its address at Close.
func (l *kernelListener) Released() <-chan struct{} { return closedChan }

// kernelConn is a Conn on a kernel SCTP socket (one-to-one style).
type kernelConn struct {
	c       *sctp.SCTPConn
	streams uint16
	wmu     sync.Mutex
}

func newKernelConn(c *sctp.SCTPConn, o *options) (Conn, error) {
	if err := c.SubscribeEvents(sctp.SCTP_EVENT_DATA_IO); err != nil {
		_ = c.Close()
		return nil, err
	}
	_ = c.SetReadBuffer(o.socketBuffer)
	_ = c.SetWriteBuffer(o.socketBuffer)
	// The peer may accept fewer inbound streams than we offer (the kernel's
	// default is 10): use only what the association negotiated, or every
	// write on a higher stream fails with EINVAL.
	streams := o.streams
	if st, err := c.GetStatus(); err == nil && st.Ostreams > 0 && st.Ostreams < streams {
		streams = st.Ostreams
	}
	if err := setPathFailure(c, o); err != nil {
		_ = c.Close()
		return nil, err
	}
	return &kernelConn{c: c, streams: streams}, nil
}

// setPathFailure applies WithPathFailure to the association (Linux
// struct sctp_assocparams and struct sctp_rtoinfo; zero fields keep the
// current value).
func setPathFailure(c *sctp.SCTPConn, o *options) error {
	if o.maxRetrans > 0 {
		p := struct {
			assocID                  int32
			maxRetrans, destinations uint16
			peerRwnd, localRwnd      uint32
			cookieLife               uint32
		}{maxRetrans: uint16(min(o.maxRetrans, 0xffff))}
		if _, _, err := c.Setsockopt(sctp.SCTP_ASSOCINFO, uintptr(unsafe.Pointer(&p)), unsafe.Sizeof(p)); err != nil {
			return fmt.Errorf("SCTP_ASSOCINFO: %w", err)
		}
	}
	if ms := o.rtoMax.Milliseconds(); ms > 0 {
		r := struct {
			assocID              int32
			initial, max, minRTO uint32
		}{max: uint32(ms)}
		if ms < 1000 { // RTO.Min (default 1 s) must not exceed RTO.Max
			r.minRTO = uint32(ms)
		}
		if _, _, err := c.Setsockopt(sctp.SCTP_RTOINFO, uintptr(unsafe.Pointer(&r)), unsafe.Sizeof(r)); err != nil {
			return fmt.Errorf("SCTP_RTOINFO: %w", err)
		}
	}
	return nil
}

func (k *kernelConn) ReadMsg(b []byte) (int, uint16, uint32, error) {
	n, info, err := k.c.SCTPRead(b)
	if err != nil {
		if errors.Is(err, syscall.EBADF) || errors.Is(err, io.EOF) {
			return 0, 0, 0, ErrClosed
		}
		return 0, 0, 0, err
	}
	if n == 0 {
		return 0, 0, 0, ErrClosed
	}
	if info == nil {
		return n, 0, 0, nil
	}
	return n, info.Stream, info.PPID, nil
}

func (k *kernelConn) WriteMsg(b []byte, stream uint16, ppid uint32) error {
	if stream >= k.streams {
		return ErrStreamNumber
	}
	// The PPID in host order: ishidawataru/sctp puts it in network order
	// for the kernel (which carries it opaquely) and back on reading.
	_, err := k.c.SCTPWrite(b, &sctp.SndRcvInfo{Stream: stream, PPID: ppid})
	return err
}

func (k *kernelConn) OutboundStreams() uint16    { return k.streams }
func (k *kernelConn) LocalAddr() netip.AddrPort  { return addrPortOf(k.c.LocalAddr()) }
func (k *kernelConn) RemoteAddr() netip.AddrPort { return addrPortOf(k.c.RemoteAddr()) }
func (k *kernelConn) Kind() Kind                 { return KindKernel }

// Shutdown: close(2) on a one-to-one SCTP socket sends SHUTDOWN after the
// queued data (no SO_LINGER set).
func (k *kernelConn) Shutdown(ctx context.Context) error { return k.c.Close() }
func (k *kernelConn) Close() error                       { return k.c.Close() }

func addrPortOf(a net.Addr) netip.AddrPort {
	if sa, ok := a.(*sctp.SCTPAddr); ok && sa != nil && len(sa.IPAddrs) > 0 {
		ip, _ := netip.AddrFromSlice(sa.IPAddrs[0].IP)
		return netip.AddrPortFrom(ip.Unmap(), uint16(sa.Port))
	}
	return netip.AddrPort{}
}
