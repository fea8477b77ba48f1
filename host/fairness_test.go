package host_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/sprc"
)

// flooder is a host that writes outseizes as fast as the gateway reads them
// and counts the answers.
type flooder struct {
	sent, answers, shareRefused, otherNaks, acks atomic.Uint64
	stop                                         chan struct{}
	underWay                                     chan struct{} // closed at the 2000th answer
	done                                         sync.WaitGroup
}

func startFlooder(t *testing.T, r *rawConn, dpc int, max int) *flooder {
	f := &flooder{stop: make(chan struct{}), underWay: make(chan struct{})}
	f.done.Add(2)
	go func() { // writer: bounded in count, stops when told
		defer f.done.Done()
		var chunk bytes.Buffer
		for seq := 1; seq <= max; {
			select {
			case <-f.stop:
				return
			default:
			}
			chunk.Reset()
			for range 500 {
				fmt.Fprintf(&chunk, `{"type":"outseize","seq":%d,"dpc":%d,"called":"4930"}`+"\n", seq, dpc)
				seq++
			}
			if _, err := r.nc.Write(chunk.Bytes()); err != nil {
				return
			}
			f.sent.Add(500)
		}
	}()
	go func() { // reader: until the connection closes
		defer f.done.Done()
		for {
			line, err := r.br.ReadSlice('\n')
			if err != nil {
				return
			}
			switch {
			case bytes.Contains(line, []byte(`"type":"ack"`)):
				f.acks.Add(1)
			case bytes.Contains(line, []byte(`"type":"nak"`)):
				if bytes.Contains(line, []byte(`"status":12,`)) && bytes.Contains(line, []byte("its share")) {
					f.shareRefused.Add(1)
				} else {
					f.otherNaks.Add(1)
				}
			default:
				continue // alarms
			}
			if f.answers.Add(1) == 2000 {
				close(f.underWay)
			}
		}
	}()
	return f
}

// One host floods the gateway with outseizes while another places calls at a
// modest rate: the other host's calls are all admitted (the flooder cannot
// fill the outbound queue whose delay decides congestion for every host),
// and the flooder's excess is refused to it with 0x0C. Congestion control on
// A reacts within a fraction of a second here, so that a flood that did
// reach the shared queue would show.
func TestFloodingHostDoesNotTakeOthersAdmission(t *testing.T) {
	control := sprc.Config{ProbeInterval: 100 * time.Millisecond, AverageOver: 5,
		Level1Delay: time.Second, Level1Average: 500 * time.Millisecond, ClearAverage: 100 * time.Millisecond,
		CodeYellow: sprc.CodeYellowConfig{Enabled: true, SampleSize: 5, EntryLatency: 500 * time.Millisecond, ExitPercent: 40}}
	const share = 16 // MaxPending: small, for a margin under the race detector and a loaded machine (a sleep of 100 µs can last milliseconds)
	// Each item costs A's loop at least 100 µs, so the loop, not the host
	// API, is what a flood outruns (as with real destinations).
	slow := func() { time.Sleep(100 * time.Microsecond) }
	a, b := startPair(t, pairOpts{controlA: &control, slowA: slow, hostA: host.Config{MaxPending: share}})
	calleeRel := b.dial(t, "unix", client.Config{Incoming: true}).answerer()
	caller := a.dial(t, "tcp", client.Config{App: "modest"})

	fr := a.raw(t, "tcp", nil)
	if m := fr.roundTrip(`{"type":"hello","seq":0,"version":1,"token":"` + token + `","app":"flood"}`); m.Type != wire.TypeAck {
		t.Fatalf("flooder hello: %+v", m)
	}
	// The flood goes to PC 3, which no association reaches: each outseize
	// costs the stack's loop a refusal (destination unavailable). Closing
	// resets the connection, so the gateway does not go on to read
	// what the flooder left in its socket.
	fr.nc.(*net.TCPConn).SetLinger(0)
	f := startFlooder(t, fr, 3, 5_000_000)
	defer func() {
		close(f.stop)
		fr.nc.Close()
		f.done.Wait()
	}()
	select {
	case <-f.underWay:
	case <-time.After(10 * time.Second):
		t.Fatalf("flooder got %d answers in 10 s", f.answers.Load())
	}

	const calls = 40
	refused := map[string]int{}
	var maxDelay time.Duration
	tick := time.NewTicker(20 * time.Millisecond) // the modest rate: at most 50 calls a second
	defer tick.Stop()
	for i := range calls {
		<-tick.C
		s, err := caller.Outseize(ctx10(t), client.Outseize{DPC: 2, Called: "4930123456", Calling: "4930999"})
		snap := a.g.Control.Snapshot()
		maxDelay = max(maxDelay, snap.LastDelay[sprc.Outbound])
		var nak *client.Nak
		if errors.As(err, &nak) {
			refused[fmt.Sprintf("0x%04X %s", uint16(nak.Status), nak.Detail)]++
			continue
		}
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		for answered := false; !answered; {
			switch e := next[client.Event](caller).(type) {
			case *client.Answered:
				answered = e.Call == s.Call
			case *client.Released:
				t.Fatalf("call %d released before answer: %+v", i, e)
			}
		}
		if err := caller.Release(ctx10(t), s.Call, 0, 0); err != nil {
			t.Fatal(err)
		}
		if r := next[*client.Released](caller); r.Call != s.Call {
			t.Fatalf("released %+v", r)
		}
		<-calleeRel
	}
	m := a.srv.Metrics()
	t.Logf("other host: %d calls, refusals %v; flooder: sent %d, answered %d (%d refused for its share, %d other naks, %d acks); server ShareRefused %d; A's outbound probe delay at most %v",
		calls, refused, f.sent.Load(), f.answers.Load(), f.shareRefused.Load(), f.otherNaks.Load(), f.acks.Load(), m.ShareRefused, maxDelay)
	if len(refused) > 0 {
		t.Errorf("the other host's calls were refused while one host flooded: %v", refused)
	}
	if f.shareRefused.Load() == 0 || m.ShareRefused == 0 {
		t.Errorf("the flooder's excess was not refused for its share (%d, counted %d)", f.shareRefused.Load(), m.ShareRefused)
	}
	if st, err := caller.Status(ctx10(t)); err != nil || st["max_pending"] != float64(share) {
		t.Errorf("status: %v %v", st, err)
	}
}
