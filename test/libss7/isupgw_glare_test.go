package libss7

import (
	"testing"

	"github.com/isupgw/isupgw/host/client"
)

// TestISUPGWGlare: isupgw and libss7 seize the same CIC at once (farend
// holds isupgw's IAM until its own is out). By Q.764 2.9.1.4 (T1.113.4
// the same rule by default) the exchange with the higher point code,
// isupgw here, controls the even CICs: on CIC 8 isupgw keeps its call and
// libss7 repeats its attempt on another circuit; on CIC 9 libss7 keeps its
// call and isupgw takes it, repeating its own on another circuit.
func TestISUPGWGlare(t *testing.T) {
	t.Parallel()
	bin := Build(t)
	for _, v := range gwVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			s := newSession(t, bin, v, `"1-31"`, 31, "1-31")
			g := s.g
			for _, tc := range []struct {
				cic        int
				gwControls bool
				farCalled  string
			}{{8, true, "111"}, {9, false, "222"}} {
				fm, om, im := g.far.Log().Mark(), s.out.mark(), s.in.mark()
				s.far("glare "+itoa(tc.cic)+" "+tc.farCalled, Msg("local", "GLARE_ARMED", tc.cic))
				seized, err := s.out.outseize(v.farPCCode, tc.cic, "5551234", "5557654", 3, 3)
				if err != nil {
					t.Fatalf("CIC %d: outseize: %v", tc.cic, err)
				}
				ds := s.farWait(fm, Msg("local", "DUAL_SEIZURE", tc.cic))
				if (ds.Int("controlling") == 1) == tc.gwControls {
					t.Errorf("CIC %d: libss7 says %s", tc.cic, ds.Line)
				}
				// isupgw's call is answered (farend autoanswers) ...
				s.out.wait(om, answeredOf(seized.Call))
				// ... and the host is offered libss7's, with its digits.
				inc := s.in.wait(im, incomingOn(-1)).(*client.Incoming)
				if inc.Called != tc.farCalled+v.st {
					t.Errorf("CIC %d: host offered %+v", tc.cic, inc)
				}
				var repeat Event
				if tc.gwControls {
					// libss7 gave way: its attempt comes again on another CIC.
					repeat = s.farWait(fm, Msg("local", "REPEAT", -1))
					if repeat.CIC == tc.cic || int(inc.CIC) != repeat.CIC {
						t.Errorf("CIC %d: libss7 repeated on %d, host offered on %d", tc.cic, repeat.CIC, inc.CIC)
					}
					if e := s.farWait(fm, Msg("tx", "ANM", tc.cic)); e.CIC != tc.cic {
						t.Errorf("isupgw's call not kept on CIC %d", tc.cic)
					}
				} else {
					// isupgw gave way: it took libss7's call on the CIC and
					// repeated its own elsewhere (Q.764 2.9.1.4 b).
					if int(inc.CIC) != tc.cic {
						t.Errorf("CIC %d: host offered libss7's call on %d", tc.cic, inc.CIC)
					}
					rep := s.farWait(fm, func(e Event) bool { return e.Dir == "rx" && e.Msg == "IAM" && e.CIC != tc.cic })
					if rep.Called != "5551234" {
						t.Errorf("isupgw's repeat attempt: %s", rep.Line)
					}
				}
				s.releaseOut(seized.Call)
				s.hostAnswer(inc)
				s.far("rel "+itoa(int(inc.CIC))+" 16", Msg("rx", "RLC", int(inc.CIC)))
				g.idle()
				g.farIdle()
			}
			st := g.stats()
			if st.Glare != 2 || st.GlareRetries != 1 || st.RepeatAttempts != 1 {
				t.Errorf("isupgw: glare %d, lost %d, repeat attempts %d; want 2, 1, 1", st.Glare, st.GlareRetries, st.RepeatAttempts)
			}
			t.Logf("%s: dual seizure on CIC 8 kept by isupgw, on CIC 9 by libss7; the other side repeated its attempt each time", v.name)
			// isupgw strict; libss7 logs "Got ANM but we didn't send IAM"
			// for its own calls that went through the glare path (the
			// repeat on CIC 1, the kept call on CIC 9) when isupgw's host
			// answers them with ACM then ANM, as Q.764 2.1.4-2.1.7 has it:
			// a libss7/farend call-structure quirk, logged only.
			checkCounters(t, g, 0, true, false)
		})
	}
}
