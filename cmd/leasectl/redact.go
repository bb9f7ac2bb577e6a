package main

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces a password wherever leasectl writes one out.
const redacted = "xxxxx"

// The shapes in which a DSN carries a secret:
var (
	// a URL's user information, scheme://user:PASSWORD@host (the last @
	// of the word, as a password may hold one);
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)[^\s]*@`)
	// a URL's query parameter, ?password=... or &sslpassword=...;
	queryPassword = regexp.MustCompile(`(?i)([?&](?:ssl)?password=)[^&#\s` + "`" + `'"]*`)
	// a key=value pair, with any spacing around the = and a value bare
	// (backslash escapes allowed) or single-quoted, perhaps unterminated.
	keyValuePassword = regexp.MustCompile(`(?i)((?:^|[\s` + "`" + `'"(])(?:ssl)?password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|(?:[^\s\\]|\\.)+)`)
)

// redact returns msg with every password taken out: those of the DSNs
// given, wherever they appear, and any that a DSN-shaped text in msg
// carries, whatever its form. It is leasectl's one redaction: run passes
// every error it writes through it, and dsnError the DSN it shows.
func redact(msg string, dsns ...string) string {
	for _, dsn := range dsns {
		for _, s := range secretsOf(dsn) {
			msg = strings.ReplaceAll(msg, s, redacted)
		}
	}
	msg = urlPassword.ReplaceAllString(msg, "${1}"+redacted+"@")
	msg = queryPassword.ReplaceAllString(msg, "${1}"+redacted)
	return keyValuePassword.ReplaceAllString(msg, "${1}"+redacted)
}

// minSecret is the shortest secret replaced wherever it appears: a shorter
// one would take letters out of every word, and is still taken out of
// every DSN-shaped text.
const minSecret = 4

// secretsOf returns the passwords dsn holds, as written and decoded.
func secretsOf(dsn string) []string {
	var out []string
	add := func(s string) {
		if len(s) >= minSecret {
			out = append(out, s)
		}
	}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		for k, vs := range u.Query() {
			if strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword") {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	for _, m := range urlPassword.FindAllStringSubmatchIndex(dsn, -1) {
		// The raw user information, undecoded, up to its @.
		add(dsn[m[3] : m[1]-1])
	}
	for _, m := range queryPassword.FindAllStringIndex(dsn, -1) {
		_, v, _ := strings.Cut(dsn[m[0]:m[1]], "=")
		add(v)
		if d, err := url.QueryUnescape(v); err == nil {
			add(d)
		}
	}
	for _, m := range keyValuePassword.FindAllStringSubmatchIndex(dsn, -1) {
		v := dsn[m[3]:m[1]]
		add(v)
		v = strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
		add(v)
		add(strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(v))
	}
	return out
}
