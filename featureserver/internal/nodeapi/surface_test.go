package nodeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A body the API cannot parse is not echoed back (a 200 KB one used to be, whole),
// a long rejected value is cut, and every answer says nosniff.
func TestProblemDocumentsStaySmall(t *testing.T) {
	t.Parallel()
	api := startAPI(t, apiSetup{})
	acct := api.createAccount("a")
	junk := `{"name": "` + strings.Repeat("x", 200<<10) // unterminated: not JSON
	req, _ := http.NewRequest("POST", api.base+"/v1/Accounts/"+acct.AccountSid+"/Applications", strings.NewReader(junk))
	req.Header.Set("Authorization", "Bearer "+acct.APIToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || buf.Len() > 2048 || strings.Contains(buf.String(), strings.Repeat("x", 200)) {
		t.Errorf("an unparseable 200 KB body: %d, %d bytes answered; want 400 without the body", resp.StatusCode, buf.Len())
	}
	long := strings.Repeat("y", 5000)
	code, h, raw := api.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Applications", acct.APIToken,
		map[string]any{"name": long, "call_hook": map[string]any{"url": "http://127.0.0.1:1/"}}, nil)
	var problem struct {
		Errors []struct {
			Location string `json:"location"`
			Value    any    `json:"value"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(raw, &problem)
	if code != http.StatusUnprocessableEntity || len(raw) > 2048 || len(problem.Errors) == 0 || problem.Errors[0].Location != "body.name" {
		t.Errorf("a 5000-character name: %d, %d bytes: %s", code, len(raw), raw)
	}
	for _, hdr := range []http.Header{h, resp.Header} {
		if hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("an answer without nosniff: %v", hdr)
		}
	}
	for _, path := range []string{"/v1/Accounts/" + acct.AccountSid + "/Calls", "/nowhere"} {
		if _, h, _ := api.do("GET", path, "", nil, nil); h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s without nosniff", path)
		}
	}
}

// Every operation of the OpenAPI document declares a security scheme the document
// defines, the /v1 routes included, and the 429 of the limits on failed tokens.
func TestEveryOperationDeclaresItsSecurity(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDocument(t), &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Security  []map[string][]string      `json:"security"`
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if json.Unmarshal(raw, &op) != nil {
				continue // not an operation (parameters)
			}
			if len(op.Security) == 0 {
				t.Errorf("%s %s declares no security", method, path)
			}
			for _, req := range op.Security {
				for scheme := range req {
					if _, ok := doc.Components.SecuritySchemes[scheme]; !ok {
						t.Errorf("%s %s names the undefined scheme %q", method, path, scheme)
					}
				}
			}
			if _, ok := op.Responses["429"]; !ok {
				t.Errorf("%s %s does not declare 429", method, path)
			}
		}
	}
}
