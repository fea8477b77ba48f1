package libss7

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/isup"
)

// checkLinkUp asserts what farend's --wire log shows of the start-up
// between isupgw and libss7: each side's SLTM answered by the other's SLTA
// (Q.707 2.2), TRA both ways (Q.704 9.2), isupgw's start-up GRS answered
// by libss7's GRA and libss7's by isupgw's (Q.764 2.9.3.1), and isupgw's
// link test counted as passed.
func checkLinkUp(t *testing.T, g *gw) {
	t.Helper()
	log := g.far.Log()
	for _, w := range []struct{ dir, msg string }{
		{"wire_rx", "SIO"}, {"wire_rx", "SIE"}, // isupgw aligns with emergency proving (Q.703 7.3)
		{"wire_rx", "SLTM"}, {"wire_tx", "SLTA"}, {"wire_tx", "SLTM"}, {"wire_rx", "SLTA"},
		{"wire_rx", "TRA"}, {"wire_tx", "TRA"},
		{"rx", "GRS"}, {"tx", "GRA"}, {"tx", "GRS"}, {"rx", "GRA"},
	} {
		if log.Count(Msg(w.dir, w.msg, -1)) == 0 {
			t.Errorf("start-up: farend saw no %s %s", w.dir, w.msg)
		}
	}
	// libss7 checks the SLTA's test pattern is its own (Q.707 2.2); isupgw's
	// SLTA echoes it, so the hex after the label and H0/H1 must match.
	st := g.stats()
	if st.Received[isup.GRS] == 0 || st.Sent[isup.GRA] != st.Received[isup.GRS] {
		t.Errorf("isupgw: %d GRS received, %d GRA sent", st.Received[isup.GRS], st.Sent[isup.GRA])
	}
	if st.Sent[isup.GRS] == 0 || st.Received[isup.GRA] != st.Sent[isup.GRS] {
		t.Errorf("isupgw: %d GRS sent, %d GRA received", st.Sent[isup.GRS], st.Received[isup.GRA])
	}
	ready, _ := log.Wait(time.Second, Msg("local", "READY", -1))
	t.Logf("%s: link aligned, tested both ways, traffic restarted and both start-up group resets answered %d ms after farend started",
		g.v.name, ready.T)
}

// checkClean asserts that neither side saw a message it did not expect:
// no CFN either way, no UCIC (but the allowed ones) and no unexpected-message
// count at isupgw; no error, unexpected event, UCIC or CFN at farend. It
// ends farend's script first so its EXIT counters are final.
func checkClean(t *testing.T, g *gw, ucicAllowed int) {
	t.Helper()
	checkCounters(t, g, ucicAllowed, true, true)
}

// checkCounters is checkClean; with strict false the unexpected-message
// counts on both sides (and libss7's error log lines) are logged, not
// failed on: see TestISUPGWSupervision for what is still open there.
func checkCounters(t *testing.T, g *gw, ucicAllowed int, strictGW, strict bool) {
	t.Helper()
	st := g.stats()
	if !strictGW {
		t.Logf("%s: open: isupgw unexpected-message count %d", g.v.name, st.Unexpected)
		st.Unexpected = 0
	}
	if st.Unexpected != 0 || st.Received[isup.CFN] != 0 || st.Sent[isup.CFN] != 0 || st.DecodeErrors != 0 ||
		st.UnrecognisedMessage != 0 || st.UnrecognisedParam != 0 || st.MalformedREL != 0 {
		t.Errorf("isupgw: unexpected %d, CFN in %d out %d, decode errors %d, unrecognised messages %d parameters %d, malformed REL %d",
			st.Unexpected, st.Received[isup.CFN], st.Sent[isup.CFN], st.DecodeErrors, st.UnrecognisedMessage, st.UnrecognisedParam, st.MalformedREL)
	}
	if int(st.Sent[isup.UCIC]) != ucicAllowed || st.Received[isup.UCIC] != 0 || int(st.UnknownCIC) != ucicAllowed {
		t.Errorf("isupgw: UCIC sent %d (want %d), received %d, unknown CIC %d", st.Sent[isup.UCIC], ucicAllowed, st.Received[isup.UCIC], st.UnknownCIC)
	}
	// A script ends with its input; other modes with SIGTERM.
	g.far.CloseInput()
	if err := g.far.Wait(2 * time.Second); err != nil {
		if err := g.far.Stop(); err != nil {
			t.Errorf("farend exit: %v", err)
		}
	}
	exit, err := g.far.Log().Wait(time.Second, Msg("local", "EXIT", -1))
	if err != nil {
		t.Fatal(err)
	}
	rx := exit.Counters("rx")
	if rx["CFN"] != 0 || rx["UCIC"] != ucicAllowed {
		t.Errorf("farend: %s", exit.Line)
	}
	report := t.Errorf
	if !strict {
		report = t.Logf
	}
	if exit.Int("errors") != 0 || exit.Int("unexpected") != 0 {
		report("%s: farend errors %d, unexpected %d", g.v.name, exit.Int("errors"), exit.Int("unexpected"))
	}
	for _, e := range g.far.Log().All() {
		if e.Dir == "log" && e.Msg == "error" {
			report("libss7 error: %s", e.Text)
		}
	}
}

// farCalls checks farend's view of the calls: every call on every CIC went
// as want, and there were n.
func farCalls(t *testing.T, events []Event, ncic, n int, want []string) {
	t.Helper()
	got := 0
	for cic := 1; cic <= ncic; cic++ {
		for _, c := range splitCalls(callSequence(events, cic)) {
			got++
			if !equal(c, want) {
				t.Errorf("farend CIC %d: %v, want %v", cic, c, want)
			}
		}
	}
	if got != n {
		t.Errorf("farend: %d calls, want %d", got, n)
	}
}

// TestISUPGWCalls: 100 calls from libss7 to a host on isupgw, then 100 from
// a host on isupgw to libss7, each IAM, ACM, ANM, REL, RLC (Q.764 2.1-2.3,
// T1.113.4 2.1-2.3), in ITU and ANSI: the digits, natures of address and
// causes arrive as sent on both sides.
func TestISUPGWCalls(t *testing.T) {
	t.Parallel()
	bin := Build(t)
	const calls = 100
	for _, v := range gwVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, v, `"1-31"`, 31)
			in, out := g.host(true), g.host(false)
			g.connect(bin, Config{CICs: "1-31", Mode: []string{"originate", strconv.Itoa(calls), "200"},
				Args: []string{"--stay", "--called", "4930123", "--calling", "4940567", "--called-nai", "3", "--calling-nai", "4", "--cause", "16"}})
			checkLinkUp(t, g)

			// libss7 -> isupgw: the host alerts and answers; libss7 releases
			// at once after ANM with cause 16.
			start := time.Now()
			for i := 0; i < calls; i++ {
				e := in.waitN(0, i+1, 10*time.Second, incomingOn(-1))[i].(*client.Incoming)
				// libss7 ends every ITU called number with ST (Q.763 3.9
				// allows it; a real exchange's may or may not): isupgw's
				// host sees it as F.
				if e.Called != "4930123"+v.st || e.CalledNAI != 3 || e.Calling != "4940567" || e.CallingNAI != 4 {
					t.Errorf("host got incoming %+v", e)
				}
				in.do("alert", func(ctx context.Context) error { return in.c.Alert(ctx, e.Call) })
				in.do("answer", func(ctx context.Context) error { return in.c.Answer(ctx, e.Call) })
			}
			done, err := g.far.Log().Wait(15*time.Second, Msg("local", "DONE", -1))
			if err != nil {
				t.Fatal(err)
			}
			rels := in.waitN(0, calls, 10*time.Second, func(e client.Event) bool { _, ok := e.(*client.Released); return ok })
			for _, e := range rels {
				r := e.(*client.Released)
				if r.Cause != 16 || !r.Remote {
					t.Errorf("host got released %+v, want cause 16 from the far end", r)
				}
			}
			inMS := time.Since(start).Milliseconds()
			if done.Int("completed") != calls || done.Int("failed") != 0 || done.Int("answered") != calls {
				t.Errorf("farend DONE: %s", done.Line)
			}
			min, max, sum := callTimes(g.far.Log().All())
			t.Logf("%s: %d calls libss7 -> isupgw host offered at 200/s: %d completed in %d ms; IAM sent to RLC received min %d ms, mean %.1f ms, max %d ms",
				v.name, calls, done.Int("completed"), done.Int("ms"), min, float64(sum)/calls, max)
			g.idle()
			mark := g.far.Log().Mark()

			// isupgw -> libss7: farend answers (ACM, ANM), the host releases
			// with cause 31. Four hosts' worth of calls at a time.
			start = time.Now()
			var next, failed atomic.Int64
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= calls {
						if err := hostCall(out, v.farPCCode); err != nil {
							failed.Add(1)
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			outMS := time.Since(start).Milliseconds()
			g.idle()
			if _, err := g.far.Log().WaitCount(calls, 5*time.Second, func(e Event) bool {
				return e.Dir == "tx" && e.Msg == "RLC"
			}); err != nil {
				t.Fatal(err)
			}
			far := g.far.Log().All()[mark:]
			farCalls(t, far, 31, calls, []string{"rx IAM", "tx ACM", "tx ANM", "rx REL", "tx RLC"})
			for _, e := range far {
				switch {
				case e.Dir == "rx" && e.Msg == "IAM" && (e.Called != "5551234" || e.CalledNAI != 3 || e.Calling != "5557654" || e.CallingNAI != 4):
					t.Errorf("farend got %s", e.Line)
				case e.Dir == "rx" && e.Msg == "REL" && e.Cause != 31:
					t.Errorf("farend got %s", e.Line)
				}
			}
			t.Logf("%s: %d calls isupgw host -> libss7 (4 at a time): %d failed; %d ms for all, %.1f ms a call; libss7 -> isupgw took %d ms",
				v.name, calls, failed.Load(), outMS, float64(outMS)/calls, inMS)
			checkClean(t, g, 0)
		})
	}
}

// hostCall places one call from the host to libss7, waits for its ACM and
// ANM, releases it with cause 31 and waits for the released event.
func hostCall(h *host, dpc uint32) error {
	mark := h.mark()
	s, err := h.outseize(dpc, -1, "5551234", "5557654", 3, 4)
	if err != nil {
		return fmt.Errorf("outseize: %w", err)
	}
	for _, m := range []func(client.Event) bool{progressOf(s.Call, "ACM"), answeredOf(s.Call)} {
		if _, err := h.find(mark, 1, stepTimeout, m); err != nil {
			return fmt.Errorf("call %d on CIC %d: %w", s.Call, s.CIC, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if err := h.c.Release(ctx, s.Call, 31, 0); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	evs, err := h.find(mark, 1, stepTimeout, releasedOf(s.Call))
	if err != nil {
		return err
	}
	if r := evs[0].(*client.Released); r.Remote || r.Cause != 31 {
		return fmt.Errorf("released %+v, want cause 31 from the host", r)
	}
	return nil
}
