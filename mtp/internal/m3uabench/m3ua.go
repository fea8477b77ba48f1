package main

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
)

const (
	aspPC mtp.PointCode = 2
	sgPC  mtp.PointCode = 1
)

var lo = netip.MustParseAddr("127.0.0.1")

func waitActive(e *m3ua.Endpoint, peer string) error {
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-e.Events():
			if ps, ok := ev.(mtp.PeerState); ok && ps.Peer == peer && ps.State == "active" {
				go drainEvents(e)
				return nil
			}
		case <-deadline:
			return fmt.Errorf("%s not active", peer)
		}
	}
}

func drainEvents(e *m3ua.Endpoint) {
	for range e.Events() {
	}
}

// m3uaServer is the SG side in the peer process.
func m3uaServer(mode string, count int) error {
	sg, err := m3ua.New(m3ua.Config{Role: m3ua.RoleSG, Transport: transport.KindUDP,
		Listen: netip.AddrPortFrom(lo, 0),
		Peers:  []m3ua.Peer{{Name: "asp", From: lo, DPCs: []mtp.PointCode{aspPC}}}}, topts()...)
	if err != nil {
		return err
	}
	if err := sg.Start(context.Background()); err != nil {
		return err
	}
	fmt.Printf("ADDR %s\n", sg.Addr())
	if err := waitActive(sg, "asp"); err != nil {
		return err
	}
	before := mallocs()
	for i := 0; i < count; i++ {
		m := <-sg.Indications()
		if mode == "rr" || i == count-1 {
			m.OPC, m.DPC = sgPC, aspPC
			m.Peer = ""
			if err := sg.Transfer(&m); err != nil {
				return err
			}
		}
	}
	fmt.Printf("ALLOCS %.2f\n", perMsg(before, count))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return sg.Close(ctx)
}

// m3uaClient is the ASP side, measured.
func m3uaClient(addr, mode string, count int) (rate, allocs float64, err error) {
	sgAddr, err := netip.ParseAddrPort(addr)
	if err != nil {
		return 0, 0, err
	}
	asp, err := m3ua.New(m3ua.Config{Role: m3ua.RoleASP, Transport: transport.KindUDP,
		Peers: []m3ua.Peer{{Name: "sg", Dial: sgAddr, DPCs: []mtp.PointCode{sgPC}}}}, topts()...)
	if err != nil {
		return 0, 0, err
	}
	if err := asp.Start(context.Background()); err != nil {
		return 0, 0, err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = asp.Close(ctx)
	}()
	if err := waitActive(asp, "sg"); err != nil {
		return 0, 0, err
	}
	msg := mtp.Message{Label: mtp.Label{OPC: aspPC, DPC: sgPC, SI: mtp.SIISUP, NI: 2}, Payload: make([]byte, *payload)}
	send := func(i int) error {
		msg.SLS = uint8(i % *slsN)
		return asp.Transfer(&msg)
	}
	before := mallocs()
	start := time.Now()
	switch mode {
	case "oneway":
		for i := 0; i < count; i++ {
			if err := send(i); err != nil {
				return 0, 0, err
			}
		}
		<-asp.Indications()
	case "rr":
		sent := 0
		for ; sent < *window; sent++ {
			if err := send(sent); err != nil {
				return 0, 0, err
			}
		}
		for got := 0; got < count; got++ {
			<-asp.Indications()
			if sent < count {
				if err := send(sent); err != nil {
					return 0, 0, err
				}
				sent++
			}
		}
	}
	return since(start, count), perMsg(before, count), nil
}

func topts() []m3ua.Option {
	if *maxBuf == 0 {
		return nil
	}
	return []m3ua.Option{m3ua.WithTransportOptions(transport.WithMaxBuffered(*maxBuf))}
}
