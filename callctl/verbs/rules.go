package verbs

import "fmt"

// Rules that span properties, and defaults the runtime relies on, applied after a
// verb's properties decoded (see finisher).

// finish requires text unless the say streams its text later (say.stream = true),
// which is why the jambonz spec no longer lists text as required.
func (v *Say) finish() (field, reason string) {
	if len(v.Text) == 0 && !v.Stream {
		return "text", "required"
	}
	return "", ""
}

// finish defaults input to ["digits"] as jambonz does, and rejects digit bounds that
// no caller input could satisfy.
func (v *Gather) finish() (field, reason string) {
	if len(v.Input) == 0 {
		v.Input = []string{"digits"}
	}
	if v.MinDigits > 0 && v.MaxDigits > 0 && v.MinDigits > v.MaxDigits {
		return "minDigits", fmt.Sprintf("%d is greater than maxDigits %d", v.MinDigits, v.MaxDigits)
	}
	return "", ""
}

// finish keeps the status a final non-success SIP response, the only kind a
// decline can send.
func (v *SipDecline) finish() (field, reason string) {
	if v.Status < 300 || v.Status > 699 {
		return "status", fmt.Sprintf("%d is not a SIP status between 300 and 699", v.Status)
	}
	return "", ""
}
