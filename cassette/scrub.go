package cassette

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	vcr "gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
)

// redacted replaces a credential wherever it appears.
const redacted = "[redacted]"

// secretName reports whether a header or query parameter name says it
// holds a credential.
func secretName(name string) bool {
	n := strings.ToLower(name)
	if n == "key" {
		return true
	}
	for _, s := range []string{"authorization", "api-key", "api_key", "apikey", "token", "secret", "cookie", "auth", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// scrub is the go-vcr hook, run after each capture and before the save:
// it removes credentials from the exchange.
func (r *Recorder) scrub(i *vcr.Interaction) error {
	secrets := slices.Clone(r.keys)
	i.Request.Headers, secrets = scrubHeader(i.Request.Headers, secrets, secretName)
	i.Response.Headers, secrets = scrubHeader(i.Response.Headers, secrets, secretResponseHeader)
	i.Request.Form, secrets = scrubValues(i.Request.Form, secrets)
	if u, err := url.Parse(i.Request.URL); err == nil {
		var q url.Values
		q, secrets = scrubValues(u.Query(), secrets)
		u.RawQuery = q.Encode()
		i.Request.URL = u.String()
	}
	if u, err := url.Parse(i.Request.RequestURI); err == nil && i.Request.RequestURI != "" {
		var q url.Values
		q, secrets = scrubValues(u.Query(), secrets)
		u.RawQuery = q.Encode()
		i.Request.RequestURI = u.String()
	}
	replace := func(s string) string {
		for _, v := range secrets {
			if len(v) >= 8 { // short values (say "1") would garble the text
				s = strings.ReplaceAll(s, v, redacted)
			}
		}
		return s
	}
	i.Request.URL = replace(i.Request.URL)
	i.Request.RequestURI = replace(i.Request.RequestURI)
	i.Request.Body = replace(i.Request.Body)
	i.Response.Body = replace(i.Response.Body)
	for _, h := range []http.Header{i.Request.Headers, i.Response.Headers} {
		for k, vs := range h {
			for j := range vs {
				vs[j] = replace(vs[j])
			}
			h[k] = vs
		}
	}
	return nil
}

// secretResponseHeader reports whether a response header may hold a
// credential. It is narrower than secretName: headers such as
// x-ratelimit-remaining-tokens stay.
func secretResponseHeader(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "cookie") || strings.Contains(n, "authorization") || strings.Contains(n, "api-key") || strings.Contains(n, "secret")
}

// scrubHeader returns a copy of h without the headers secret names, and
// secrets with the values it removed.
func scrubHeader(h http.Header, secrets []string, secret func(string) bool) (http.Header, []string) {
	if h == nil {
		return nil, secrets
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		if secret(k) {
			secrets = append(secrets, secretParts(vs)...)
			continue
		}
		out[k] = slices.Clone(vs)
	}
	return out, secrets
}

// scrubValues is scrubHeader for form and query values.
func scrubValues(v url.Values, secrets []string) (url.Values, []string) {
	if v == nil {
		return nil, secrets
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		if secretName(k) {
			secrets = append(secrets, secretParts(vs)...)
			continue
		}
		out[k] = slices.Clone(vs)
	}
	return out, secrets
}

// secretParts returns the values, and of "Bearer xyz" also "xyz".
func secretParts(vs []string) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v)
		if _, rest, ok := strings.Cut(v, " "); ok {
			out = append(out, rest)
		}
	}
	return out
}
