package stack

import (
	"github.com/isupgw/isupgw/isup"
)

// compatible applies Q.764 §2.9.5 to unrecognised messages and parameters. It
// returns false when the message must not be processed further.
func (c *core) compatible(p int, ci int32, m isup.Message) bool {
	if u, ok := m.(*isup.Unknown); ok {
		c.stats.UnrecognisedMessage++
		c.unrecognisedMessage(p, ci, u)
		return false
	}
	c.relDiag = c.relDiag[:0]
	opt := isup.OptionalOf(m)
	if opt == nil {
		return true
	}
	if _, ok := m.(*isup.Release); ok {
		c.unrecognisedInREL(opt)
		return true
	}
	for i := 0; i < len(*opt); i++ {
		code := (*opt)[i].Code
		if code.Known() {
			continue
		}
		c.stats.UnrecognisedParam++
		switch c.unrecognisedParam(p, ci, m, *opt, code) {
		case actionRelease, actionDiscardMessage:
			return false
		case actionDiscardParam:
			opt.Remove(code)
			i--
		}
	}
	return true
}

// unrecognisedInREL drops the unrecognised parameters of a REL. A REL is
// never discarded nor answered with a release (it is one already): whatever
// the parameter compatibility information says, the call is released, and
// the notification, when one is due (no instructions, or "send
// notification"), rides in the RLC as cause 99 with the parameter names as
// diagnostics (Q.764 §2.9.5.2; ITU RLC's optional cause exists for this), not
// in a CFN crossing the RLC. ANSI RLC carries no parameters: no notification.
func (c *core) unrecognisedInREL(opt *isup.Optional) {
	var pci isup.ParameterCompatibilityInformation
	hasPCI := false
	if ok, err := opt.Decode(&pci); ok && err == nil {
		hasPCI = true
	}
	for i := 0; i < len(*opt); i++ {
		code := (*opt)[i].Code
		if code.Known() {
			continue
		}
		c.stats.UnrecognisedParam++
		var ins isup.ParameterInstructions
		found := false
		if hasPCI {
			ins, found = pci.Instructions(code)
		}
		if !found || ins.SendNotification() {
			c.relDiag = append(c.relDiag, byte(code))
		}
		opt.Remove(code)
		i--
	}
}

type compatAction uint8

const (
	actionPassOn compatAction = iota
	actionDiscardParam
	actionDiscardMessage
	actionRelease
)

// unrecognisedParam decides from the parameter compatibility information what to
// do with an unknown parameter. Without instructions the parameter is discarded
// and CFN (cause 99) sent. As an end node we cannot pass a parameter on, so
// "pass on" falls back to the pass-on-not-possible instruction.
func (c *core) unrecognisedParam(p int, ci int32, m isup.Message, opt isup.Optional, code isup.ParameterCode) compatAction {
	var pci isup.ParameterCompatibilityInformation
	var ins isup.ParameterInstructions
	found := false
	if ok, err := opt.Decode(&pci); ok && err == nil {
		ins, found = pci.Instructions(code)
	}
	diag := []byte{byte(code)}
	if !found {
		c.confusion(p, ci, isup.CauseParameterNonExistent, diag)
		return actionDiscardParam
	}
	action := actionPassOn
	switch {
	case ins.ReleaseCall():
		action = actionRelease
	case ins.DiscardMessage():
		action = actionDiscardMessage
	case ins.DiscardParameter():
		action = actionDiscardParam
	default:
		switch ins.PassOnNotPossible() {
		case 0:
			action = actionRelease
		case 1:
			action = actionDiscardMessage
		default:
			action = actionDiscardParam
		}
	}
	if action == actionRelease {
		c.releaseForCompat(p, ci, m, isup.CauseParameterNonExistent, diag)
		return action
	}
	if ins.SendNotification() {
		c.confusion(p, ci, isup.CauseParameterNonExistent, diag)
	}
	return action
}

// unrecognisedMessage: Q.764 §2.9.5.2. The message compatibility information can
// be read when the unknown message has the usual optional-part-only layout;
// without it, CFN with cause 97.
func (c *core) unrecognisedMessage(p int, ci int32, u *isup.Unknown) {
	diag := []byte{byte(u.Kind)}
	var mci isup.MessageCompatibilityInformation
	if opt, ok := optionalOnly(u.Body); ok {
		if found, err := opt.Decode(&mci); found && err == nil && len(mci) > 0 {
			switch {
			case mci.ReleaseCall():
				c.releaseForCompat(p, ci, nil, isup.CauseMessageTypeNonExistent, diag)
				return
			case mci.DiscardMessage():
				if mci.SendNotification() {
					c.confusion(p, ci, isup.CauseMessageTypeNonExistent, diag)
				}
				return
			}
		}
	}
	c.confusion(p, ci, isup.CauseMessageTypeNonExistent, diag)
}

// optionalOnly reads a body as pointer + optional part (the layout new message
// types use so that older exchanges can find their compatibility information).
func optionalOnly(body []byte) (isup.Optional, bool) {
	m, err := isup.Decode(append([]byte{0, 0, byte(isup.FAC)}, body...), isup.ITU)
	if err != nil {
		return nil, false
	}
	return *isup.OptionalOf(m), true
}

func (c *core) confusion(p int, ci int32, cause uint8, diag []byte) {
	cc := &c.circuits[ci]
	c.send(p, &isup.Confusion{Circuit: isup.Circuit{CIC: cc.cic}, Cause: isup.CauseIndicators{Location: isup.LocationPublicLocal, Value: cause, Diagnostics: diag}})
}

// releaseForCompat releases the call on the circuit (or refuses the IAM that was
// to start one) with a compatibility cause.
func (c *core) releaseForCompat(p int, ci int32, m isup.Message, cause uint8, diag []byte) {
	cc := &c.circuits[ci]
	if cl := cc.call; cl != nil {
		c.releaseCall(cl, cause, isup.LocationPublicLocal, "incompatible message from the far end", true)
		return
	}
	if _, isIAM := m.(*isup.InitialAddress); isIAM && cc.state == csIdle {
		c.rejectIAM(p, ci, cause, "incompatible IAM (Q.764 §2.9.5 compatibility procedure)")
	}
}
