package cmd

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// humanDuration writes d for people, in the largest unit it is a whole number of: "7d" for
// Kafka's default offsets retention, "36h", "1h30m", "90s" read better than Go's "168h0m0s".
// Scripts read the JSON outputs, where a duration is a number of seconds.
func humanDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "0s"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	// "1h30m0s" -> "1h30m"; "2m0s" -> "2m"; "1h0m5s" and "1.5s" stay as they are.
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

// logDurations is the loggers' ReplaceAttr for duration values: seconds in JSON logs, as in
// the JSON outputs (slog's JSON handler writes nanoseconds), humanDuration in text logs.
func logDurations(json bool) func([]string, slog.Attr) slog.Attr {
	return func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() != slog.KindDuration {
			return a
		}
		if json {
			return slog.Float64(a.Key, a.Value.Duration().Seconds())
		}
		return slog.String(a.Key, humanDuration(a.Value.Duration()))
	}
}
