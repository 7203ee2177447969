package verbs

// Hook is a webhook reference: jambonz accepts a string URL or an object. Decoding
// requires a non-empty URL (absolute, or relative to the application URL), upper-cases
// Method and rejects any method but GET and POST.
type Hook struct {
	URL      string `json:"url"`
	Method   string `json:"method,omitempty"` // "POST" (default) or "GET"
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// MethodOrDefault returns the hook's HTTP method, POST when none was given.
func (h *Hook) MethodOrDefault() string {
	if h.Method == "" {
		return "POST"
	}
	return h.Method
}

// simple reports whether the hook is only a URL, so it encodes back as a string.
func (h *Hook) simple() bool {
	return h.Method == "" && h.Username == "" && h.Password == ""
}
