package nodeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/internal/calls"
	"github.com/switchboard-voice/switchboard/internal/nodestore"
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
	case errors.Is(err, nodestore.ErrNotFound):
		return nil, huma.Error404NotFound("call not found or no longer active")
	case errors.Is(err, calls.ErrCallEnded):
		return nil, huma.Error409Conflict("the call has ended")
	case errors.Is(err, calls.ErrNotHere):
		return nil, huma.Error503ServiceUnavailable("the node running the call lost its lease: the call is being recorded as ended")
	case err != nil:
		return nil, a.internal(err)
	case peer == "":
		return nil, huma.Error404NotFound("call not found or no longer active")
	}
	body, err := json.Marshal(in.Body)
	if err != nil {
		return nil, a.internal(err)
	}
	target := peer + "/v1/Accounts/" + url.PathEscape(acct.Sid) + "/Calls/" + url.PathEscape(in.CallSid)
	// POST, the form that answers the accepted command (PUT answers 204, no body).
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, a.internal(err)
	}
	req.Header.Set("Authorization", in.Authorization)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ForwardedHeader, a.node)
	resp, err := a.peers.Do(req)
	if err != nil {
		a.log.Warn().Err(err).Str("call_sid", in.CallSid).Str("peer", peer).Msg("forwarding live control to the call's node failed")
		return nil, huma.Error502BadGateway("the node running the call did not answer")
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxPeerAnswer))
	if err != nil {
		return nil, huma.Error502BadGateway("the node running the call did not answer whole")
	}
	if resp.StatusCode == http.StatusAccepted {
		out := &acceptedOutput{}
		if err := json.Unmarshal(answer, &out.Body); err != nil {
			return nil, huma.Error502BadGateway("the node running the call answered what is not an accepted command")
		}
		return out, nil
	}
	var problem struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(answer, &problem) != nil || problem.Detail == "" {
		problem.Detail = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode < 400 || resp.StatusCode > 599 {
		return nil, huma.Error502BadGateway("the node running the call answered " + resp.Status)
	}
	return nil, huma.NewError(resp.StatusCode, problem.Detail)
}

// forwardGet reads a call that runs on another node from that node, with the caller's
// bearer token; ok is false when that node cannot say (it does not answer, or the call
// ended meanwhile), and the caller answers from the shared record.
func (a *API) forwardGet(ctx context.Context, acct nodestore.Account, in *callInput) (CallView, bool) {
	peer, err := a.calls.Locate(ctx, acct.Sid, in.CallSid)
	if err != nil || peer == "" {
		return CallView{}, false
	}
	target := peer + "/v1/Accounts/" + url.PathEscape(acct.Sid) + "/Calls/" + url.PathEscape(in.CallSid)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return CallView{}, false
	}
	req.Header.Set("Authorization", in.Authorization)
	req.Header.Set(ForwardedHeader, a.node)
	resp, err := a.peers.Do(req)
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
	case errors.Is(err, calls.ErrNotHere):
		return true, huma.Error503ServiceUnavailable("the node running the call lost its lease: the call is being recorded as ended")
	case errors.Is(err, nodestore.ErrNotFound), errors.Is(err, calls.ErrCallEnded):
		return false, nil
	case err != nil:
		return true, a.internal(err)
	case peer == "":
		return false, nil
	}
	target := peer + "/v1/Accounts/" + url.PathEscape(acct.Sid) + "/Calls/" + url.PathEscape(in.CallSid)
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, target, nil)
	if err != nil {
		return true, a.internal(err)
	}
	req.Header.Set("Authorization", in.Authorization)
	req.Header.Set(ForwardedHeader, a.node)
	resp, err := a.peers.Do(req)
	if err != nil {
		a.log.Warn().Err(err).Str("call_sid", in.CallSid).Str("peer", peer).Msg("forwarding a call's deletion to its node failed")
		return true, huma.Error502BadGateway("the node running the call did not answer")
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxPeerAnswer))
	switch {
	case err != nil:
		return true, huma.Error502BadGateway("the node running the call did not answer whole")
	case resp.StatusCode == http.StatusNoContent:
		return true, nil
	case resp.StatusCode < 400 || resp.StatusCode > 599:
		return true, huma.Error502BadGateway("the node running the call answered " + resp.Status)
	}
	var problem struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(answer, &problem) != nil || problem.Detail == "" {
		problem.Detail = http.StatusText(resp.StatusCode)
	}
	return true, huma.NewError(resp.StatusCode, problem.Detail)
}
