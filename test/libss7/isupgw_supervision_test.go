package libss7

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
)

// hostAnswer alerts and answers an incoming call.
func (s *session) hostAnswer(inc *client.Incoming) {
	s.t.Helper()
	s.hostDo(s.in, "alert", func(ctx context.Context, c *client.Client) error { return c.Alert(ctx, inc.Call) })
	s.hostDo(s.in, "answer", func(ctx context.Context, c *client.Client) error { return c.Answer(ctx, inc.Call) })
}

// answeredOut places a host call on cic that farend (autoanswer on)
// answers.
func (s *session) answeredOut(cic int) uint64 {
	s.t.Helper()
	m := s.out.mark()
	c := s.callOut(cic)
	s.out.wait(m, answeredOf(c))
	return c
}

func (s *session) releaseOut(c uint64) {
	s.t.Helper()
	s.hostDo(s.out, "release", func(ctx context.Context, cl *client.Client) error { return cl.Release(ctx, c, 16, 0) })
}

func (s *session) refusedOn(cic int) {
	s.t.Helper()
	_, err := s.out.outseize(s.g.v.farPCCode, cic, "5551234", "5557654", 3, 3)
	var nak *client.Nak
	if !errorsAs(err, &nak) || nak.Status != wire.Status(stack.StatusCircuitUnavailable) {
		s.t.Errorf("outseize on CIC %d blocked by libss7: %v, want nak circuit unavailable", cic, err)
	}
}

// blockedAtGW counts isupgw's circuits whose state names contain what.
func (s *session) blockedAtGW(what string) int {
	n := 0
	for state, k := range s.g.run.Gateway.Status().Circuits {
		if strings.Contains(state, what) {
			n += k
		}
	}
	return n
}

func groupCheck(rng, typ int, status string) func(Event) string {
	return func(e Event) string {
		if e.Range != rng || e.Type != typ || e.Status != status {
			return fmt.Sprintf("want range %d, type %d, status %s", rng, typ, status)
		}
		return ""
	}
}

// TestISUPGWSupervision: circuit supervision between isupgw and libss7 in
// ITU and ANSI. isupgw has CICs 1-30, farend 1-31.
//   - UCIC for an IAM on a CIC isupgw does not have (Q.764 2.12);
//   - BLO/UBL and CGB/CGU, maintenance and hardware, with a range, sent by
//     each side, acknowledged and obeyed: isupgw refuses an outseize on a
//     circuit libss7 blocked and hunts around it; libss7 hunts only on
//     circuits isupgw left unblocked (Q.764 2.8);
//   - CQM from isupgw answered by libss7's CQR with the Q.763 3.14 states
//     of idle, locally and remotely blocked and busy circuits (Q.764 2.9.3);
//   - RSC and GRS by each side during answered calls: the calls are
//     released, every circuit idle on both sides (Q.764 2.9.3).
func TestISUPGWSupervision(t *testing.T) {
	t.Parallel()
	bin := Build(t)
	for _, v := range gwVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			s := newSession(t, bin, v, `"1-30"`, 30, "1-31")
			g := s.g
			step := func(cmd string, want ...expectation) { t.Helper(); step(t, g.far, cmd, want...) }
			fx := func(m Match, check func(Event) string) expectation { return expectation{g.far, m, check} }
			// isupgw's supervision request, then farend's events after it.
			gwStep := func(m stack.Maintenance, want ...expectation) {
				t.Helper()
				mark := g.far.Log().Mark()
				g.maintenance(m)
				for _, w := range want {
					e := s.farWait(mark, w.match)
					if w.check != nil {
						if msg := w.check(e); msg != "" {
							t.Errorf("%+v: %s: %s", m, msg, e.Line)
						}
					}
				}
				// farend's acknowledgement is out; isupgw must have it
				// before the next request, or (say) a BLA arriving after
				// our UBL is rightly counted unexpected (Q.764 2.8.2.3).
				g.eventually("acknowledged at isupgw", func() bool { return s.blockedAtGW("awaiting") == 0 })
			}

			// An IAM for CIC 31, which isupgw does not have: UCIC.
			step("call 31 999", fx(Msg("rx", "UCIC", 31), nil))
			if n := len(s.in.findNow(incomingOn(-1))); n != 0 {
				t.Errorf("host offered %d calls for an unequipped CIC", n)
			}

			// libss7 blocks: acknowledged, and isupgw offers no call there.
			step("blo 5", fx(Msg("rx", "BLA", 5), nil))
			s.refusedOn(5)
			step("ubl 5", fx(Msg("rx", "UBA", 5), nil))
			s.releaseOut(s.answeredOut(5))
			step("cgb 1 28 hw", fx(Msg("rx", "CGBA", 1), groupCheck(28, 1, strings.Repeat("1", 29))))
			s.refusedOn(3)
			for range 3 { // only CIC 30 is left for isupgw's hunt
				m := s.out.mark()
				seized, err := s.out.outseize(v.farPCCode, -1, "5551234", "5557654", 3, 3)
				if err != nil || seized.CIC != 30 {
					t.Fatalf("outseize with 1-29 blocked by libss7: %+v %v, want CIC 30", seized, err)
				}
				s.out.wait(m, answeredOf(seized.Call))
				s.releaseOut(seized.Call)
				s.out.wait(m, releasedOf(seized.Call))
				// The host hears of the release at once; the circuit is
				// idle again when the RLC is in.
				g.eventually("CIC 30 idle", func() bool { return g.run.Gateway.Status().Circuits["idle"] == 1 })
			}
			step("cgu 1 28 hw", fx(Msg("rx", "CGUA", 1), groupCheck(28, 1, strings.Repeat("1", 29))))
			step("cgb 10 3", fx(Msg("rx", "CGBA", 10), groupCheck(3, 0, "1111")))
			s.refusedOn(11)
			step("cgu 10 3", fx(Msg("rx", "CGUA", 10), groupCheck(3, 0, "1111")))
			g.idle()

			// isupgw blocks: acknowledged, and libss7 hunts around it.
			gwStep(stack.Maintenance{Op: stack.OpBlock, CIC: 6}, fx(Msg("rx", "BLO", 6), nil), fx(Msg("tx", "BLA", 6), nil))
			gwStep(stack.Maintenance{Op: stack.OpUnblock, CIC: 6}, fx(Msg("rx", "UBL", 6), nil), fx(Msg("tx", "UBA", 6), nil))
			gwStep(stack.Maintenance{Op: stack.OpBlock, CIC: 1, Range: 28, Hardware: true},
				fx(Msg("rx", "CGB", 1), groupCheck(28, 1, strings.Repeat("1", 29))), fx(Msg("tx", "CGBA", 1), nil))
			g.eventually("CGBA at isupgw", func() bool { return s.blockedAtGW("locally blocked") == 29 && s.blockedAtGW("awaiting") == 0 })
			for range 3 { // CIC 31 is unequipped at isupgw: farend may use 30 only
				m := s.in.mark()
				s.far("call any 4930111 4940222", nil)
				inc := s.in.wait(m, incomingOn(-1)).(*client.Incoming)
				if inc.CIC != 30 {
					t.Errorf("libss7 called on CIC %d, which isupgw blocked", inc.CIC)
				}
				fm := g.far.Log().Mark()
				s.hostDo(s.in, "release", func(ctx context.Context, c *client.Client) error { return c.Release(ctx, inc.Call, 17, 0) })
				s.farWait(fm, Msg("tx", "RLC", int(inc.CIC)))
			}
			gwStep(stack.Maintenance{Op: stack.OpUnblock, CIC: 1, Range: 28, Hardware: true},
				fx(Msg("rx", "CGU", 1), groupCheck(28, 1, strings.Repeat("1", 29))), fx(Msg("tx", "CGUA", 1), nil))
			gwStep(stack.Maintenance{Op: stack.OpBlock, CIC: 20, Range: 3},
				fx(Msg("rx", "CGB", 20), groupCheck(3, 0, "1111")), fx(Msg("tx", "CGBA", 20), nil))
			gwStep(stack.Maintenance{Op: stack.OpUnblock, CIC: 20, Range: 3},
				fx(Msg("rx", "CGU", 20), groupCheck(3, 0, "1111")), fx(Msg("tx", "CGUA", 20), nil))
			g.eventually("unblocked at isupgw", func() bool { return g.run.Gateway.Status().Circuits["idle"] == 30 })

			// CQM for 5-9: 5 idle, 6 blocked by isupgw, 7 blocked by libss7,
			// 8 busy with isupgw's answered call, 9 idle. Q.763 3.14 from
			// libss7's side: idle 0x0c; remotely blocked (maintenance) 0x0e;
			// locally blocked 0x0d; incoming busy, answered 0x04.
			gwStep(stack.Maintenance{Op: stack.OpBlock, CIC: 6}, fx(Msg("tx", "BLA", 6), nil))
			step("blo 7", fx(Msg("rx", "BLA", 7), nil))
			busy := s.answeredOut(8)
			am := s.out.mark()
			gwStep(stack.Maintenance{Op: stack.OpQuery, CIC: 5, Range: 4}, fx(Msg("rx", "CQM", 5), nil), fx(Msg("tx", "CQR", 5), func(e Event) string {
				if e.States != "0c0e0d040c" {
					return "want states 0c0e0d040c"
				}
				return ""
			}))
			a := s.out.wait(am, alarmOf(wire.AlarmQueryResult)).(*client.Alarm)
			if a.Text != "5:0c 6:0e 7:0d 8:04 9:0c" {
				t.Errorf("isupgw's CQR result: %q, want 5:0c 6:0e 7:0d 8:04 9:0c", a.Text)
			}
			s.releaseOut(busy)
			gwStep(stack.Maintenance{Op: stack.OpUnblock, CIC: 6}, fx(Msg("tx", "UBA", 6), nil))
			step("ubl 7", fx(Msg("rx", "UBA", 7), nil))

			// RSC by libss7 during an answered incoming call.
			m := s.in.mark()
			inc := s.callIn(12)
			s.hostAnswer(inc)
			step("rsc 12", fx(Msg("rx", "RLC", 12), nil))
			s.in.wait(m, releasedOf(inc.Call))
			// RSC by isupgw during an answered outgoing call.
			m = s.out.mark()
			c := s.answeredOut(14)
			gwStep(stack.Maintenance{Op: stack.OpReset, CIC: 14}, fx(Msg("rx", "RSC", 14), nil), fx(Msg("tx", "RLC", 14), nil))
			s.out.wait(m, releasedOf(c))
			g.idle()
			g.farIdle()

			// GRS by libss7 over 11-18 with calls on 13 (incoming) and 16.
			mi, mo := s.in.mark(), s.out.mark()
			inc = s.callIn(13)
			s.hostAnswer(inc)
			c = s.answeredOut(16)
			step("grs 11 7", fx(Msg("rx", "GRA", 11), groupCheck(7, 0, "00000000")))
			s.in.wait(mi, releasedOf(inc.Call))
			s.out.wait(mo, releasedOf(c))
			// GRS by isupgw over 20-24 with calls on 21 (incoming) and 22.
			mi, mo = s.in.mark(), s.out.mark()
			inc = s.callIn(21)
			s.hostAnswer(inc)
			c = s.answeredOut(22)
			gwStep(stack.Maintenance{Op: stack.OpReset, CIC: 20, Range: 4}, fx(Msg("rx", "GRS", 20), nil), fx(Msg("tx", "GRA", 20), nil))
			s.in.wait(mi, releasedOf(inc.Call))
			s.out.wait(mo, releasedOf(c))
			g.idle()
			g.farIdle()
			st := g.stats()
			t.Logf("%s: supervision done: isupgw sent BLO %d UBL %d CGB %d CGU %d RSC %d GRS %d CQM %d UCIC %d; received BLA %d UBA %d CGBA %d CGUA %d CQR %d",
				v.name, st.Sent[isup.BLO], st.Sent[isup.UBL], st.Sent[isup.CGB], st.Sent[isup.CGU], st.Sent[isup.RSC], st.Sent[isup.GRS], st.Sent[isup.CQM], st.Sent[isup.UCIC],
				st.Received[isup.BLA], st.Received[isup.UBA], st.Received[isup.CGBA], st.Received[isup.CGUA], st.Received[isup.CQR])
			// isupgw strict. libss7 logs "Requested free an unlinked call"
			// answering the CQM while a call is up in its range (farend's
			// CQM handler frees a call structure libss7 still lists), and
			// then "Got ACM/ANM but we didn't send IAM" for its next call on
			// CIC 12: logged, not failed (a far-end harness quirk).
			checkCounters(t, g, 1, true, false)
		})
	}
}
