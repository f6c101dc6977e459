package planfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/zk2kafka/zk2kafka/internal/strictjson"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// planTopKeys are the keys of a plan document's top-level object.
var planTopKeys = []string{"schema_version", "created_at", "policy", "offsets_retention", "filter", "cluster", "groups", "fingerprint"}

// headKeys are the keys ReadHead must have seen to stop at the groups (offsets_retention
// may be left out; a plan written before cluster was recorded is read whole, to its end). plan writes them first; a file reordered by hand may put one after the
// groups, and is then read on: stopping early returned an empty filter, and copy planned every
// group in ZooKeeper in place of the file's selection.
var headKeys = []string{"schema_version", "created_at", "policy", "filter", "cluster"}

// Scan reads exactly one plan from r as strictly as DecodePlan, one group at a time: each
// group is checked (its keys, then as Validate checks it, in name order) and handed to fn
// before the next is read, so memory holds one group, not the plan. The returned Plan has every
// field but Groups. An error from fn stops the scan and is returned as is. A plan fn saw part
// of is not a plan until Scan returns nil: a caller that must not act on half a file scans
// it whole first.
func Scan(r io.Reader, fn func(migrate.GroupPlan) error) (migrate.Plan, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	if !startsWithObject(br) {
		// Not a plan (empty, null, an array...): read it whole and let the checks of the whole
		// document name what it is, as they always did.
		p, err := decodeWhole(br)
		if err != nil {
			return migrate.Plan{}, err
		}
		for _, g := range p.Groups {
			if err := fn(g); err != nil {
				return migrate.Plan{}, err
			}
		}
		p.Groups = nil
		return p, nil
	}
	s := &planScanner{dec: json.NewDecoder(br), known: planFieldNames}
	p, err := s.scan(fn)
	if err != nil {
		var cb callbackError
		if errors.As(err, &cb) {
			return migrate.Plan{}, cb.err
		}
		return migrate.Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	return p, nil
}

// ReadHead reads a plan's fields before its groups (the selection, the policy, the time
// it was made), checked, without reading the groups: what copy needs to plan the same
// selection afresh before it reads the file whole. The fingerprint, after the groups, is not
// read. A file with any of headKeys after its groups is scanned whole.
func ReadHead(r io.Reader) (migrate.Plan, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if !startsWithObject(br) {
		return decodeWhole(br)
	}
	s := &planScanner{headOnly: true, dec: json.NewDecoder(br), known: planFieldNames}
	p, err := s.scan(func(migrate.GroupPlan) error { return nil })
	if err != nil {
		return migrate.Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	p.ReadFromSchema = s.fromSchema
	return p, nil
}

// containsAll reports whether every one of want is in have.
func containsAll(have, want []string) bool {
	return !slices.ContainsFunc(want, func(k string) bool { return !slices.Contains(have, k) })
}

// callbackError carries fn's error through the scan unchanged.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

type planScanner struct {
	headOnly bool // stop at the groups (ReadHead)
	dec      *json.Decoder
	known    map[string]bool
	started  bool // a first token was read
	array    bool // groups was an array (not null or absent)
	// retention is the JSON type offsets_retention was given as ("string" in schema 1,
	// "number" from 2 on), "" when absent: the schema_version may come after it.
	retention string
	// fromSchema is the schema_version the file gave, before upgrade.
	fromSchema int
}

func (s *planScanner) scan(fn func(migrate.GroupPlan) error) (migrate.Plan, error) {
	var p migrate.Plan
	if err := s.delim('{', "$"); err != nil {
		return migrate.Plan{}, err
	}
	var seen []string
	order := migrate.GroupOrder{}
	// A plan always has its policy before its groups, which are checked against it. A file
	// reordered by hand (a tool that sorts keys) is still read, its groups held until the
	// policy comes: the memory bound is for the files plan writes.
	var held []migrate.GroupPlan
	for s.dec.More() {
		tok, err := s.token("$")
		if err != nil {
			return migrate.Plan{}, err
		}
		key, _ := tok.(string)
		switch {
		case !slices.Contains(planTopKeys, key):
			return migrate.Plan{}, fmt.Errorf("$: unknown field %q", key)
		case slices.Contains(seen, key):
			return migrate.Plan{}, fmt.Errorf("$: field %q appears twice", key)
		}
		seen = append(seen, key)
		if key == "groups" {
			if s.headOnly && containsAll(seen, headKeys) {
				if err := s.upgrade(&p); err != nil {
					return migrate.Plan{}, err
				}
				if err := p.ValidateHead(); err != nil {
					return migrate.Plan{}, err
				}
				return p, nil
			}
			// The groups are checked against the policy and the filter (its group map).
			if !slices.Contains(seen, "policy") || !slices.Contains(seen, "filter") {
				err = s.groups(nil, func(g migrate.GroupPlan) error { held = append(held, g); return nil })
			} else if err = p.Policy.Validate(); err != nil {
				err = fmt.Errorf("plan policy: %w", err)
			} else if _, err = migrate.NewFilterFromSpec(p.Filter); err != nil {
				err = fmt.Errorf("plan filter: %w", err)
			} else {
				order.Policy, order.Filter = p.Policy, p.Filter
				err = s.groups(&order, fn)
			}
			if err != nil {
				return migrate.Plan{}, err
			}
			continue
		}
		if err := s.field(key, &p); err != nil {
			return migrate.Plan{}, err
		}
	}
	if err := s.delim('}', "$"); err != nil {
		return migrate.Plan{}, err
	}
	if _, err := s.dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return migrate.Plan{}, fmt.Errorf("after the plan at byte %d: %w", s.dec.InputOffset(), err)
		}
		return migrate.Plan{}, fmt.Errorf("trailing data after the plan at byte %d", s.dec.InputOffset())
	}
	if held != nil {
		if err := p.Policy.Validate(); err != nil {
			return migrate.Plan{}, fmt.Errorf("plan policy: %w", err)
		}
		order.Policy, order.Filter = p.Policy, p.Filter
		for _, g := range held {
			if err := order.Check(g); err != nil {
				return migrate.Plan{}, err
			}
			if err := fn(g); err != nil {
				return migrate.Plan{}, callbackError{err}
			}
		}
	}
	p.Groups = nil
	if s.array {
		p.Groups = []migrate.GroupPlan{} // as the standard decoder leaves "groups": []
	}
	if err := s.upgrade(&p); err != nil {
		return migrate.Plan{}, err
	}
	if err := p.ValidateHead(); err != nil {
		return migrate.Plan{}, err
	}
	if !migrate.ValidFingerprint(p.Fingerprint) {
		return migrate.Plan{}, fmt.Errorf("plan fingerprint %q is not of the form sha256:<64 hex digits>", p.Fingerprint)
	}
	return p, nil
}

// field decodes the value of one top-level key other than groups into p, strictly.
func (s *planScanner) field(key string, p *migrate.Plan) error {
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		return eofError(err)
	}
	if key == "offsets_retention" {
		return s.retentionField(raw, p)
	}
	// Wrapped back into an object of its one key, the value decodes into the Plan exactly as
	// it would have in the whole document, leaving the other fields alone.
	obj := append(append(append([]byte(`{"`), key...), `":`...), raw...)
	obj = append(obj, '}')
	return s.strict("$."+key, obj, p)
}

// groups reads the groups array one element at a time; order nil: fn checks them.
func (s *planScanner) groups(order *migrate.GroupOrder, fn func(migrate.GroupPlan) error) error {
	tok, err := s.token("$.groups")
	if err != nil {
		return err
	}
	if tok == nil {
		return nil // "groups": null, as the standard decoder accepts it
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("$.groups: expected an array, got %v", tok)
	}
	s.array = true
	for i := 0; s.dec.More(); i++ {
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			return eofError(err)
		}
		var g migrate.GroupPlan
		if err := s.strict(fmt.Sprintf("$.groups[%d]", i), raw, &g); err != nil {
			return err
		}
		if order != nil {
			if err := order.Check(g); err != nil {
				return err
			}
		}
		if err := fn(g); err != nil {
			return callbackError{err}
		}
	}
	return s.delim(']', "$.groups")
}

// strict checks raw's keys (exact names, no repeats) and decodes it with unknown fields refused.
func (s *planScanner) strict(at string, raw []byte, v any) error {
	if err := strictjson.CheckKeys(raw, s.known); err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	return nil
}

func (s *planScanner) token(at string) (json.Token, error) {
	tok, err := s.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) && !s.started {
			return nil, fmt.Errorf("empty input")
		}
		return nil, eofError(err)
	}
	s.started = true
	return tok, nil
}

func (s *planScanner) delim(want json.Delim, at string) error {
	tok, err := s.token(at)
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("%s: expected %q, got %v", at, want, tok)
	}
	return nil
}

// eofError names a file that ends too early as what it most likely is.
func eofError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("unexpected end of input (a truncated file?)")
	}
	return err
}
