// Package secret holds a password so that nothing but the wire can show it. It reads and
// writes nothing.
package secret

import "log/slog"

// Secret is a password. It prints, formats, encodes and logs as "[redacted]" so that a config
// or an error that carries one can never show it; only Reveal returns the value.
type Secret string

const redacted = "[redacted]"

// String hides the secret from fmt's %v and %s.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString hides the secret from fmt's %#v.
func (s Secret) GoString() string { return s.String() }

// LogValue hides the secret from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText hides the secret from encoders (JSON, YAML).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Reveal returns the secret itself: only for the wire.
func (s Secret) Reveal() string { return string(s) }
