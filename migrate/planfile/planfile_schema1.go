package planfile

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Plan files of schema 1, saved by a zk2kafka before durations were seconds, are read as plans
// of schema 2: copy --plan of a plan made before an upgrade goes on working, and is never
// misread.

// retentionField reads offsets_retention: seconds, or in a plan of schema 1 a Go duration
// string. Which one the file may hold is decided by upgrade, once schema_version is known.
func (s *planScanner) retentionField(raw json.RawMessage, p *migrate.Plan) error {
	if len(raw) > 0 && raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return fmt.Errorf("$.offsets_retention: %w", err)
		}
		d, err := time.ParseDuration(text)
		if err != nil {
			return fmt.Errorf("$.offsets_retention: %w", err)
		}
		p.Retention, s.retention = migrate.Duration(d), "string"
		return nil
	}
	if err := p.Retention.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("$.offsets_retention: %w", err)
	}
	s.retention = "number"
	return nil
}

// upgrade reads a plan of schema 1 as one of schema 2: they differ only in offsets_retention,
// a Go duration string in 1 ("168h0m0s"), seconds in 2. Each must hold its own form: a number
// in a plan of schema 1, or a string in one of 2, is a file no zk2kafka wrote, refused rather
// than guessed at.
func (s *planScanner) upgrade(p *migrate.Plan) error {
	s.fromSchema = p.SchemaVersion
	switch {
	case p.SchemaVersion == 1 && s.retention == "number":
		return fmt.Errorf("plan schema_version 1 has offsets_retention as a number: schema 1 wrote a duration string (\"168h0m0s\"), 2 writes seconds")
	case p.SchemaVersion == 1:
		p.SchemaVersion = migrate.PlanSchemaVersion
	case p.SchemaVersion == migrate.PlanSchemaVersion && s.retention == "string":
		return fmt.Errorf("plan schema_version %d has offsets_retention as a string: it is a number of seconds since schema 2", p.SchemaVersion)
	}
	return nil
}
