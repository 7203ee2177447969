package callctl

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// What the call's alerts and compat warnings may quote of its application's
// answers (Options.QuoteAnswersFrom): on a node, an account reads them, and an
// application URL is one it sets under the call-control rules, which may reach the
// operator's private network; what an address there answered is not the account's
// to read (docs/call-control.md §5).

// quotable reports whether the call may quote what its application answered: every
// destination its connections reached so far is one Options.QuoteAnswersFrom
// allows (always, without it).
func (c *callRun) quotable() bool {
	return c.peers == nil || c.peers.All(c.opts.QuoteAnswersFrom)
}

// notQuoted is what stands in for a quote the call may not make.
func (c *callRun) notQuoted() string {
	if c.opts.NotQuotedHint != "" {
		return c.opts.NotQuotedHint
	}
	return "not quoted"
}

// unquoted returns ans judged as it is, but with nothing of what the application
// said in its texts when the call may not quote it: what kind of answer it was
// (what: "a 200 answer", "an ack") stands in.
func (c *callRun) unquoted(ans answer, what string) answer {
	if c.quotable() {
		return ans
	}
	switch {
	case ans.err != nil:
		ans.err = fmt.Errorf("%w: %s whose verbs do not validate (%s)", verbs.ErrInvalidPayload, what, c.notQuoted())
	case ans.notArray != "":
		ans.notArray = fmt.Sprintf("%s that is not a JSON array (%s)", what, c.notQuoted())
	}
	return ans
}

// quoteData quotes the start of data the application sent (a command's) for a
// warning, when the call may quote it.
func (c *callRun) quoteData(data []byte) string {
	if !c.quotable() {
		return "(" + c.notQuoted() + ")"
	}
	return bodyStart(data)
}

// failureClass says how a request failed without its error's text, which can quote
// the answer: its class and the status of its last answer.
func failureClass(err error) string {
	class, status := transport.Classify(err), 0
	var he *transport.HookError
	var de *wsclient.DialError
	switch {
	case errors.As(err, &he):
		class, status = he.Class, he.Status
	case errors.As(err, &de):
		class, status = de.Class, de.Status
	}
	if status != 0 {
		return fmt.Sprintf("status %d (%s)", status, class)
	}
	return string(class)
}

// unquotedData is what stands in a timeline event for data the call may not quote:
// note, as a JSON string; no data stays none.
func unquotedData(data, note string) string {
	if data == "" {
		return ""
	}
	b, _ := json.Marshal(note) // a string always marshals
	return string(b)
}

// commandName names a command the application sent, for a warning: a name jambonz
// does not know is the application's text, quoted only when the call may.
func (c *callRun) commandName(name string) string {
	if wssession.KnownCommand(name) || c.quotable() {
		return name
	}
	return "(" + c.notQuoted() + ")"
}
