package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/internal/lockedbuf"
)

func TestTraceShowsOneCallBetweenTwoGateways(t *testing.T) {
	a, b := startTwo(t)
	_, eventsA := a.host(t, true)
	hostB, eventsB := b.host(t, false)

	var out lockedbuf.Buffer
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- newApp(strings.NewReader(""), &out, &out).RunContext(ctx,
			[]string{"isupgw", "trace", "--called", "4930", "--host-api", a.api, "--token", "secret"})
	}()
	defer func() { stop(); <-done }()
	eventually(t, "the trace running on A", func() bool {
		n, err := a.Gateway.Gateway.Stack.TraceCount(context.Background())
		return err == nil && n == 1
	})

	call := func(called string) client.Seized {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := hostB.Outseize(c, client.Outseize{DPC: 1, Called: called})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	traced, other := call("4930123456"), call("5551234")
	answered := map[uint64]bool{}
	for len(answered) < 2 {
		select {
		case e := <-eventsB:
			if x, ok := e.(*client.Answered); ok {
				answered[x.Call] = true
			}
		case <-time.After(10 * time.Second):
			t.Fatal("calls not answered")
		}
	}
	for _, s := range []client.Seized{traced, other} {
		if err := hostB.Release(context.Background(), s.Call, 16, 1); err != nil {
			t.Fatal(err)
		}
		waitReleased(t, eventsA, func(r *client.Released) bool { return r.CIC == s.CIC })
	}
	eventually(t, "the traced call's release in the trace", func() bool {
		return strings.Contains(out.String(), "released cause=16") && strings.Contains(out.String(), fmt.Sprintf("cic=%d RLC", traced.CIC))
	})
	stop()
	if err := <-done; err != nil {
		t.Fatalf("isupgw trace: %v", err)
	}
	done <- nil // for the deferred receive
	text := out.String()
	for _, want := range []string{
		fmt.Sprintf("2>1 sls=%d cic=%d IAM", traced.CIC&0xf, traced.CIC),
		"4930123456",
		"gw>host call=", " incoming route=b cic=" + fmt.Sprint(traced.CIC),
		"host>gw call=", " answer",
		"result status=0x0010 ok",
		fmt.Sprintf("1>2 sls=%d cic=%d ANM", traced.CIC&0xf, traced.CIC),
		fmt.Sprintf("2>1 sls=%d cic=%d REL cause=16", traced.CIC&0xf, traced.CIC),
		"released cause=16 location=1 remote=true",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("trace lacks %q:\n%s", want, text)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.Contains(l, fmt.Sprintf("cic=%d ", other.CIC)) || strings.Contains(l, "5551234") {
			t.Errorf("the other call (CIC %d) is traced: %s", other.CIC, l)
		}
		if !strings.Contains(l, fmt.Sprintf("cic=%d", traced.CIC)) && !strings.Contains(l, "call=") {
			t.Errorf("a line about neither the traced circuit nor a call: %s", l)
		}
	}
	t.Logf("trace:\n%s", text)
}
