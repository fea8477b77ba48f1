package libss7

import (
	"context"
	"strconv"
	"testing"

	"github.com/isupgw/isupgw/host/client"
)

// session is a gateway with a script-driven farend and two hosts: one that
// places calls (out) and one that is offered them (in).
type session struct {
	t       *testing.T
	g       *gw
	in, out *host
}

func newSession(t *testing.T, bin string, v gwVariant, gwCICs string, ncic int, farCICs string) *session {
	g := newGateway(t, v, gwCICs, ncic)
	s := &session{t: t, g: g, in: g.host(true), out: g.host(false)}
	g.connect(bin, Config{CICs: farCICs, Mode: []string{"script", "-"}})
	return s
}

// far sends a script command and waits for farend's event m after it.
func (s *session) far(cmd string, m Match) Event {
	s.t.Helper()
	mark := s.g.far.Log().Mark()
	if err := s.g.far.Command(cmd); err != nil {
		s.t.Fatal(err)
	}
	if m == nil {
		return Event{}
	}
	e, err := s.g.far.Log().WaitAfter(mark, stepTimeout, m)
	if err != nil {
		s.t.Fatalf("%q: %v", cmd, err)
	}
	return e
}

// farWait waits for farend's event m after mark.
func (s *session) farWait(mark int, m Match) Event {
	s.t.Helper()
	e, err := s.g.far.Log().WaitAfter(mark, stepTimeout, m)
	if err != nil {
		s.t.Fatal(err)
	}
	return e
}

// callOut places a host call on cic and waits for farend to see its IAM.
func (s *session) callOut(cic int) uint64 {
	s.t.Helper()
	mark := s.g.far.Log().Mark()
	seized, err := s.out.outseize(s.g.v.farPCCode, cic, "5551234", "5557654", 3, 3)
	if err != nil {
		s.t.Fatalf("outseize on CIC %d: %v", cic, err)
	}
	s.farWait(mark, Msg("rx", "IAM", cic))
	return seized.Call
}

// callIn has farend call on cic and waits for the host's incoming call.
func (s *session) callIn(cic int) *client.Incoming {
	s.t.Helper()
	mark := s.in.mark()
	s.far("call "+strconv.Itoa(cic)+" 4930111 4940222", nil)
	return s.in.wait(mark, incomingOn(cic)).(*client.Incoming)
}

func (s *session) hostDo(h *host, what string, f func(ctx context.Context, c *client.Client) error) {
	s.t.Helper()
	h.do(what, func(ctx context.Context) error { return f(ctx, h.c) })
}

func (s *session) released(h *host, mark int, call uint64, cause uint8, remote bool) {
	s.t.Helper()
	r := h.wait(mark, releasedOf(call)).(*client.Released)
	if r.Cause != cause || r.Remote != remote {
		s.t.Errorf("call %d released %+v, want cause %d remote %v", call, r, cause, remote)
	}
}

// TestISUPGWReleases covers calls with CPG, with SUS/RES, released by
// either side, before and after answer (Q.764 2.1-2.5, T1.113.4 2.1-2.5),
// both ways, in ITU and ANSI; then checks each circuit's sequence at
// farend and that neither side saw anything unexpected.
func TestISUPGWReleases(t *testing.T) {
	t.Parallel()
	bin := Build(t)
	for _, v := range gwVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			s := newSession(t, bin, v, `"1-31"`, 31, "1-31")
			s.far("autoanswer off", nil)
			out, in := s.out, s.in

			// isupgw -> libss7: ACM, CPG (alerting), ANM; libss7 releases (31).
			m := out.mark()
			c := s.callOut(2)
			s.far("acm 2", Msg("tx", "ACM", 2))
			s.far("cpg 2", Msg("tx", "CPG", 2))
			out.wait(m, progressOf(c, "ACM"))
			if p := out.wait(m, progressOf(c, "CPG")).(*client.Progress); p.Fields["event"] != float64(1) {
				t.Errorf("host CPG: %+v", p.Fields)
			}
			s.far("anm 2", Msg("tx", "ANM", 2))
			out.wait(m, answeredOf(c))
			s.far("rel 2 31", Msg("rx", "RLC", 2))
			s.released(out, m, c, 31, true)

			// libss7 releases after ACM, before answer (17 user busy).
			m = out.mark()
			c = s.callOut(4)
			s.far("acm 4", Msg("tx", "ACM", 4))
			out.wait(m, progressOf(c, "ACM"))
			s.far("rel 4 17", Msg("rx", "RLC", 4))
			s.released(out, m, c, 17, true)

			// libss7 refuses the IAM at once (21 call rejected).
			m = out.mark()
			c = s.callOut(6)
			s.far("rel 6 21", Msg("rx", "RLC", 6))
			s.released(out, m, c, 21, true)

			// The host releases after ACM, before answer.
			m = out.mark()
			c = s.callOut(8)
			s.far("acm 8", Msg("tx", "ACM", 8))
			out.wait(m, progressOf(c, "ACM"))
			fm := s.g.far.Log().Mark()
			s.hostDo(out, "release", func(ctx context.Context, cl *client.Client) error { return cl.Release(ctx, c, 16, 0) })
			if e := s.farWait(fm, Msg("rx", "REL", 8)); e.Cause != 16 {
				t.Errorf("farend REL: %s", e.Line)
			}
			s.farWait(fm, Msg("tx", "RLC", 8))

			// Answered, SUS and RES from the called side (user-initiated,
			// Q.764 2.5.1), then the host releases.
			m = out.mark()
			c = s.callOut(10)
			s.far("acm 10", Msg("tx", "ACM", 10))
			s.far("anm 10", Msg("tx", "ANM", 10))
			out.wait(m, answeredOf(c))
			s.far("sus 10", Msg("tx", "SUS", 10))
			out.wait(m, progressOf(c, "SUS"))
			s.far("res 10", Msg("tx", "RES", 10))
			out.wait(m, progressOf(c, "RES"))
			fm = s.g.far.Log().Mark()
			s.hostDo(out, "release", func(ctx context.Context, cl *client.Client) error { return cl.Release(ctx, c, 16, 0) })
			s.farWait(fm, Msg("tx", "RLC", 10))

			// libss7 -> isupgw: the host alerts, sends CPG, answers and
			// releases.
			_ = in.mark()
			inc := s.callIn(3)
			fm = s.g.far.Log().Mark()
			s.hostDo(in, "alert", func(ctx context.Context, cl *client.Client) error { return cl.Alert(ctx, inc.Call) })
			s.hostDo(in, "progress", func(ctx context.Context, cl *client.Client) error { return cl.Progress(ctx, inc.Call, 1) })
			s.hostDo(in, "answer", func(ctx context.Context, cl *client.Client) error { return cl.Answer(ctx, inc.Call) })
			if e := s.farWait(fm, Msg("rx", "CPG", 3)); e.Event != 1 {
				t.Errorf("farend CPG: %s", e.Line)
			}
			s.farWait(fm, Msg("rx", "ANM", 3))
			s.hostDo(in, "release", func(ctx context.Context, cl *client.Client) error { return cl.Release(ctx, inc.Call, 16, 0) })
			if e := s.farWait(fm, Msg("rx", "REL", 3)); e.Cause != 16 {
				t.Errorf("farend REL: %s", e.Line)
			}
			s.farWait(fm, Msg("tx", "RLC", 3))

			// Answered, SUS and RES from the network (Q.764 2.5.2), libss7
			// releases.
			m = in.mark()
			inc = s.callIn(5)
			fm = s.g.far.Log().Mark()
			s.hostDo(in, "answer", func(ctx context.Context, cl *client.Client) error { return cl.Answer(ctx, inc.Call) })
			// Answer without ACM: CON in ITU (Q.764 2.1.7.3); ANSI has no
			// CON (T1.113.4 2.1.7), so ACM then ANM.
			answerSeq := []string{"rx CON"}
			if v.name == "ansi" {
				answerSeq = []string{"rx ACM", "rx ANM"}
			}
			s.farWait(fm, Msg("rx", answerSeq[len(answerSeq)-1][3:], 5))
			s.far("sus 5 net", nil)
			in.wait(m, progressOf(inc.Call, "SUS"))
			s.far("res 5 net", nil)
			in.wait(m, progressOf(inc.Call, "RES"))
			s.far("rel 5 16", Msg("rx", "RLC", 5))
			s.released(in, m, inc.Call, 16, true)

			// libss7 releases after ACM, before answer.
			m = in.mark()
			inc = s.callIn(7)
			fm = s.g.far.Log().Mark()
			s.hostDo(in, "alert", func(ctx context.Context, cl *client.Client) error { return cl.Alert(ctx, inc.Call) })
			s.farWait(fm, Msg("rx", "ACM", 7))
			s.far("rel 7 19", Msg("rx", "RLC", 7))
			s.released(in, m, inc.Call, 19, true)

			// The host refuses the call after ACM (17 user busy).
			inc = s.callIn(9)
			fm = s.g.far.Log().Mark()
			s.hostDo(in, "alert", func(ctx context.Context, cl *client.Client) error { return cl.Alert(ctx, inc.Call) })
			s.hostDo(in, "release", func(ctx context.Context, cl *client.Client) error { return cl.Release(ctx, inc.Call, 17, 0) })
			if e := s.farWait(fm, Msg("rx", "REL", 9)); e.Cause != 17 {
				t.Errorf("farend REL: %s", e.Line)
			}
			s.farWait(fm, Msg("tx", "RLC", 9))

			s.g.idle()
			s.g.farIdle()
			events := s.g.far.Log().All()
			for cic, want := range map[int][]string{
				2:  {"rx IAM", "tx ACM", "tx CPG", "tx ANM", "tx REL", "rx RLC"},
				4:  {"rx IAM", "tx ACM", "tx REL", "rx RLC"},
				6:  {"rx IAM", "tx REL", "rx RLC"},
				8:  {"rx IAM", "tx ACM", "rx REL", "tx RLC"},
				10: {"rx IAM", "tx ACM", "tx ANM", "tx SUS", "tx RES", "rx REL", "tx RLC"},
				3:  {"tx IAM", "rx ACM", "rx CPG", "rx ANM", "rx REL", "tx RLC"},
				5:  append(append([]string{"tx IAM"}, answerSeq...), "tx SUS", "tx RES", "tx REL", "rx RLC"),
				7:  {"tx IAM", "rx ACM", "tx REL", "rx RLC"},
				9:  {"tx IAM", "rx ACM", "rx REL", "tx RLC"},
			} {
				calls := splitCalls(callSequence(events, cic))
				if len(calls) != 1 || !equal(calls[0], want) {
					t.Errorf("farend CIC %d: %v, want %v", cic, calls, want)
				}
			}
			t.Logf("%s: 9 calls with CPG, SUS/RES, released by either side before and after answer, as Q.764 2.1-2.5 asks", v.name)
			checkClean(t, s.g, 0)
		})
	}
}
