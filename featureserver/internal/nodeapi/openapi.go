package nodeapi

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// bearerScheme names the one security scheme: every operation takes a bearer
// token, an account's API token or the admin token.
const bearerScheme = "bearer"

// describe completes the OpenAPI document once every operation is registered: the
// license, a server, the bearer scheme on every operation, typed timeline items,
// and the 4xx answers each operation can give (problem documents), so that the
// document passes `redocly lint` with the recommended rules (.ci/run checks the
// document a node serves).
func describe(api huma.API) {
	doc := api.OpenAPI()
	doc.Info.License = &huma.License{Name: "Apache-2.0", Identifier: "Apache-2.0"}
	doc.Info.Description = "The REST API of a Switchboard feature-server node: jambonz's calls and applications, accounts, alerts, and the webhook outbox."
	doc.Servers = []*huma.Server{{URL: "http://127.0.0.1:8080", Description: "switchboard serve with its default SWITCHBOARD_LISTEN"}}
	if doc.Components.SecuritySchemes == nil {
		doc.Components.SecuritySchemes = map[string]*huma.SecurityScheme{}
	}
	doc.Components.SecuritySchemes[bearerScheme] = &huma.SecurityScheme{Type: "http", Scheme: "bearer",
		Description: "An account's API token; the operations on accounts themselves take the admin token (SWITCHBOARD_ADMIN_TOKEN)."}
	doc.Security = []map[string][]string{{bearerScheme: {}}}
	if call, ok := doc.Components.Schemas.Map()["CallView"]; ok {
		if tl, ok := call.Properties["timeline"]; ok {
			tl.Items = timelineItem()
		}
	}
	problem := &huma.MediaType{Schema: &huma.Schema{Ref: "#/components/schemas/ErrorModel"}}
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		item := doc.Paths[p]
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			// Every operation takes a bearer token, said on the operation itself (the
			// outbox's carry their own scheme), and failed tokens are limited (429).
			if len(op.Security) == 0 {
				op.Security = []map[string][]string{{bearerScheme: {}}}
			}
			codes := []int{http.StatusUnauthorized, http.StatusTooManyRequests}
			if strings.Contains(p, "{") {
				codes = append(codes, http.StatusNotFound)
			}
			if op.RequestBody != nil || len(op.Parameters) > 0 {
				codes = append(codes, http.StatusUnprocessableEntity)
			}
			if op.RequestBody != nil {
				codes = append(codes, http.StatusRequestEntityTooLarge)
			}
			for _, code := range codes {
				key := strconv.Itoa(code)
				if _, ok := op.Responses[key]; ok {
					continue
				}
				op.Responses[key] = &huma.Response{Description: http.StatusText(code),
					Content: map[string]*huma.MediaType{"application/problem+json": problem}}
			}
		}
	}
}

// timelineItem is the schema of one timeline event: the `simulate --json` line,
// its fields by kind (docs/call-control.md §8 and the --json table of docs/cli.md).
func timelineItem() *huma.Schema {
	str := &huma.Schema{Type: huma.TypeString}
	num := &huma.Schema{Type: huma.TypeInteger}
	return &huma.Schema{
		Type:                 huma.TypeObject,
		Description:          "A call event, as `switchboard simulate --json` prints it; the fields beside t_ms, call_sid and kind depend on the kind.",
		Required:             []string{"t_ms", "kind"},
		AdditionalProperties: true,
		Properties: map[string]*huma.Schema{
			"t_ms":     {Type: huma.TypeInteger, Description: "Milliseconds since the call started (simulated time unless real-time)"},
			"call_sid": str,
			"kind": {Type: huma.TypeString, Enum: []any{"call.start", "hook.attempt", "hook.retry", "ws.open", "ws.close", "ws.reconnect",
				"msg.sent", "msg.recv", "verb.start", "verb.end", "call.status", "alert", "call.end", "caller.input", "fault",
				"agent.spoke", "compat"}},
			"url": str, "transport": str, "attempt": num, "status": {Description: "call.status and call.end: a call status; hook.attempt: the HTTP status"},
			"class": str, "duration_ms": num, "delay_ms": num, "code": num, "type": str, "msgid": str, "verb": str,
			"detail": str, "rule": {Type: huma.TypeString, Description: "compat: the jambonz behaviour the call followed (docs/compatibility.md)"}, "reason": str, "sip_status": num, "from": str, "to": str, "direction": str,
			"command": str, "data": {Description: "msg.recv: a command's data; msg.sent: the payload of a voice-AI message (llm:*, tts:*) or a dialed leg's"},
			"source": str, "text": str,
		},
	}
}
