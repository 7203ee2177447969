package nodeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// ForwardedHeader marks live control that a node forwarded to the node that runs the
// call: the receiver answers it itself and never forwards it again, so that two
// nodes that disagree about a call cannot pass a request back and forth.
const ForwardedHeader = "Switchboard-Forwarded-By"

// maxPeerAnswer bounds what is read of a peer's answer to live control: an accepted
// or problem body.
const maxPeerAnswer = 64 << 10

// maxCallAnswer bounds what is read of a call a peer returns, its timeline included.
const maxCallAnswer = 16 << 20

// forwardUpdate sends live control of a call that does not run here to the node that
// runs it (calls.Manager.Locate), with the caller's bearer token, and answers as
// that node did. A call ended, or not found anywhere, answers as it would here.
func (a *API) forwardUpdate(ctx context.Context, acct nodestore.Account, in *updateCallInput) (*acceptedOutput, error) {
	peer, err := a.calls.Locate(ctx, acct.Sid, in.CallSid)
	switch {
	case err != nil:
		return nil, a.liveCallError(err)
	case peer == "":
		return nil, a.liveCallError(nodestore.ErrNotFound)
	}
	body, err := json.Marshal(in.Body)
	if err != nil {
		return nil, a.internal(err)
	}
	// POST, the form that answers the accepted command (PUT answers 204, no body).
	resp, answer, err := a.exchangeWithPeer(ctx, http.MethodPost, peer, acct.Sid, in.CallSid, in.Authorization, body,
		"forwarding live control to the call's node failed")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusAccepted {
		out := &acceptedOutput{}
		if err := json.Unmarshal(answer, &out.Body); err != nil {
			return nil, huma.Error502BadGateway("the node running the call answered what is not an accepted command")
		}
		return out, nil
	}
	return nil, peerError(resp, answer)
}

// forwardGet reads a call that runs on another node from that node, with the caller's
// bearer token; ok is false when that node cannot say (it does not answer, or the call
// ended meanwhile), and the caller answers from the shared record.
func (a *API) forwardGet(ctx context.Context, acct nodestore.Account, in *callInput) (CallView, bool) {
	peer, err := a.calls.Locate(ctx, acct.Sid, in.CallSid)
	if err != nil || peer == "" {
		return CallView{}, false
	}
	resp, err := a.requestPeer(ctx, http.MethodGet, peer, acct.Sid, in.CallSid, in.Authorization, nil)
	if err != nil {
		a.log.Debug().Err(err).Str("call_sid", in.CallSid).Str("peer", peer).Msg("reading a call from its node failed: answering from the record")
		return CallView{}, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return CallView{}, false
	}
	var v CallView
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxCallAnswer)).Decode(&v); err != nil || v.CallSid != in.CallSid {
		return CallView{}, false
	}
	return v, true
}

// forwardDelete has the node that runs an active call of the account hang it up and
// delete its record: deleted here, the record would be saved again by that node as
// the call goes on. handled is false when no other node runs the call (then it is
// deleted here, as on a single node).
func (a *API) forwardDelete(ctx context.Context, acct nodestore.Account, in *callInput) (handled bool, err error) {
	peer, err := a.calls.Locate(ctx, acct.Sid, in.CallSid)
	switch {
	case errors.Is(err, nodestore.ErrNotFound), errors.Is(err, calls.ErrCallEnded):
		return false, nil
	case err != nil:
		return true, a.liveCallError(err)
	case peer == "":
		return false, nil
	}
	resp, answer, err := a.exchangeWithPeer(ctx, http.MethodDelete, peer, acct.Sid, in.CallSid, in.Authorization, nil,
		"forwarding a call's deletion to its node failed")
	switch {
	case err != nil:
		return true, err
	case resp.StatusCode == http.StatusNoContent:
		return true, nil
	}
	return true, peerError(resp, answer)
}

// exchangeWithPeer forwards a call's request to the peer that runs it (requestPeer)
// and reads the answer, up to maxPeerAnswer bytes. Its error is the problem to
// answer the caller with: 500 when this node could not build the request, 502 when
// the peer could not be asked (logged as failure) or did not answer whole.
func (a *API) exchangeWithPeer(ctx context.Context, method, peer, accountSid, callSid, authorization string, body []byte, failure string) (*http.Response, []byte, error) {
	resp, err := a.requestPeer(ctx, method, peer, accountSid, callSid, authorization, body)
	if errors.Is(err, errPeerRequest) {
		return nil, nil, a.internal(err)
	}
	if err != nil {
		a.log.Warn().Err(err).Str("call_sid", callSid).Str("peer", peer).Msg(failure)
		return nil, nil, huma.Error502BadGateway("the node running the call did not answer")
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxPeerAnswer))
	if err != nil {
		return nil, nil, huma.Error502BadGateway("the node running the call did not answer whole")
	}
	return resp, answer, nil
}

// errPeerRequest marks a request to a peer that could not be made at all (no
// answer was asked for): this node's failure (500), not the peer's.
var errPeerRequest = errors.New("building the request to the peer failed")

// requestPeer sends a call's request on to the peer node that runs it, with the
// caller's bearer token and ForwardedHeader; body, when not nil, is sent as JSON.
// An error wrapping errPeerRequest means no request was sent.
func (a *API) requestPeer(ctx context.Context, method, peer, accountSid, callSid, authorization string, body []byte) (*http.Response, error) {
	target := peer + "/v1/Accounts/" + url.PathEscape(accountSid) + "/Calls/" + url.PathEscape(callSid)
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPeerRequest, err)
	}
	req.Header.Set("Authorization", authorization)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(ForwardedHeader, a.node)
	return a.peers.Do(req)
}

// peerError is the error a peer's answer other than success stands for: the
// problem it answered (its detail, or the status text), or 502 for an answer that
// is neither success nor a problem.
func peerError(resp *http.Response, answer []byte) error {
	if resp.StatusCode < 400 || resp.StatusCode > 599 {
		return huma.Error502BadGateway("the node running the call answered " + resp.Status)
	}
	var problem struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(answer, &problem) != nil || problem.Detail == "" {
		problem.Detail = http.StatusText(resp.StatusCode)
	}
	return huma.NewError(resp.StatusCode, problem.Detail)
}
