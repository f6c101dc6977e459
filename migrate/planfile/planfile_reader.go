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
	s := &planScanner{in: &jsonStream{r: br}, known: planFieldNames}
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
	s := &planScanner{headOnly: true, in: &jsonStream{r: br}, known: planFieldNames}
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
	in       *jsonStream
	known    map[string]bool
	array    bool // groups was an array (not null or absent)
	// retention is the JSON type offsets_retention was given as ("string" in schema 1,
	// "number" from 2 on), "" when absent: the schema_version may come after it.
	retention string
	// fromSchema is the schema_version the file gave, before upgrade.
	fromSchema int
	seen       []string            // the top-level keys read so far
	order      migrate.GroupOrder  // the groups' rules, once the policy and filter are read
	held       []migrate.GroupPlan // groups read before the policy or the filter
	names      interned            // strings the groups' entries repeat
}

func (s *planScanner) scan(fn func(migrate.GroupPlan) error) (migrate.Plan, error) {
	var p migrate.Plan
	err := s.members("$", func() error {
		key, err := s.topKey()
		switch {
		case err != nil:
			return err
		case key != "groups":
			return s.field(key, &p)
		case s.headOnly && containsAll(s.seen, headKeys):
			return errHeadRead
		}
		return s.groupsField(&p, fn)
	})
	if errors.Is(err, errHeadRead) {
		return s.head(p)
	}
	if err != nil {
		return migrate.Plan{}, eofError(err)
	}
	if err := s.in.atEnd(); err != nil {
		return migrate.Plan{}, err
	}
	if err := s.replayHeld(p, fn); err != nil {
		return migrate.Plan{}, err
	}
	p.Groups = nil
	if s.array {
		p.Groups = []migrate.GroupPlan{} // as the standard decoder leaves "groups": []
	}
	p, err = s.head(p)
	if err != nil {
		return migrate.Plan{}, err
	}
	if !migrate.ValidFingerprint(p.Fingerprint) {
		return migrate.Plan{}, fmt.Errorf("plan fingerprint %q is not of the form sha256:<64 hex digits>", p.Fingerprint)
	}
	return p, nil
}

// errHeadRead stops ReadHead's scan at the groups.
var errHeadRead = errors.New("head read")

// members reads an object at the reader, calling member for each of its members; member reads
// the key and the value.
func (s *planScanner) members(at string, member func() error) error {
	if err := s.in.expect('{', at); err != nil {
		return err
	}
	if c, err := s.in.peek(); err != nil || c == '}' {
		if err == nil {
			_, err = s.in.next()
		}
		return err
	}
	for {
		if err := member(); err != nil {
			return err
		}
		c, err := s.in.next()
		switch {
		case err != nil:
			return err
		case c == '}':
			return nil
		case c != ',':
			return fmt.Errorf("%s: invalid character %q at byte %d after object key:value pair", at, c, s.in.off-1)
		}
	}
}

// topKey reads the next top-level key: a known one, and the first time.
func (s *planScanner) topKey() (string, error) {
	key, err := s.in.key("$")
	if err != nil {
		return "", err
	}
	switch {
	case !slices.Contains(planTopKeys, key):
		return "", fmt.Errorf("$: unknown field %q", key)
	case slices.Contains(s.seen, key):
		return "", fmt.Errorf("$: field %q appears twice", key)
	}
	s.seen = append(s.seen, key)
	return key, nil
}

// head upgrades p to the current schema and checks its fields other than the groups and the
// fingerprint.
func (s *planScanner) head(p migrate.Plan) (migrate.Plan, error) {
	if err := s.upgrade(&p); err != nil {
		return migrate.Plan{}, err
	}
	if err := p.ValidateHead(); err != nil {
		return migrate.Plan{}, err
	}
	return p, nil
}

// groupsField reads the groups. A plan always has its policy before its groups, which are
// checked against it and the filter (its group map). A file reordered by hand (a tool that
// sorts keys) is still read, its groups held until the policy comes: the memory bound is for
// the files plan writes.
func (s *planScanner) groupsField(p *migrate.Plan, fn func(migrate.GroupPlan) error) error {
	if !slices.Contains(s.seen, "policy") || !slices.Contains(s.seen, "filter") {
		return s.groups(nil, func(g migrate.GroupPlan) error { s.held = append(s.held, g); return nil })
	}
	if err := p.Policy.Validate(); err != nil {
		return fmt.Errorf("plan policy: %w", err)
	}
	if _, err := migrate.NewFilterFromSpec(p.Filter); err != nil {
		return fmt.Errorf("plan filter: %w", err)
	}
	s.order.Policy, s.order.Filter = p.Policy, p.Filter
	return s.groups(&s.order, fn)
}

// replayHeld checks and hands fn the groups held because they came before the policy.
func (s *planScanner) replayHeld(p migrate.Plan, fn func(migrate.GroupPlan) error) error {
	if s.held == nil {
		return nil
	}
	if err := p.Policy.Validate(); err != nil {
		return fmt.Errorf("plan policy: %w", err)
	}
	s.order.Policy, s.order.Filter = p.Policy, p.Filter
	for _, g := range s.held {
		if err := s.order.Check(g); err != nil {
			return err
		}
		if err := fn(g); err != nil {
			return callbackError{err}
		}
	}
	return nil
}

// field decodes the value of one top-level key other than groups into p, strictly.
func (s *planScanner) field(key string, p *migrate.Plan) error {
	raw, err := s.in.value()
	if err != nil {
		return err
	}
	if err := checkSyntax(raw); err != nil {
		return fmt.Errorf("$.%s: %w", key, err)
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
	c, err := s.in.peek()
	if err != nil {
		return err
	}
	if c != '[' {
		raw, err := s.in.value()
		switch {
		case err != nil:
			return err
		case string(raw) == "null":
			return nil // "groups": null, as the standard decoder accepts it
		}
		return fmt.Errorf("$.groups: expected an array, got %.20q", raw)
	}
	s.array = true
	return s.elements("$.groups", func(i int) error {
		raw, err := s.in.value()
		if err != nil {
			return err
		}
		var g migrate.GroupPlan
		if !decodeGroup(raw, &g, &s.names) {
			at := fmt.Sprintf("$.groups[%d]", i)
			if err := checkSyntax(raw); err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			if err := s.strict(at, raw, &g); err != nil {
				return err
			}
		}
		if order != nil {
			if err := order.Check(g); err != nil {
				return err
			}
		}
		if err := fn(g); err != nil {
			return callbackError{err}
		}
		return nil
	})
}

// elements reads an array at the reader, calling element for each of its elements.
func (s *planScanner) elements(at string, element func(i int) error) error {
	if err := s.in.expect('[', at); err != nil {
		return err
	}
	if c, err := s.in.peek(); err != nil || c == ']' {
		if err == nil {
			_, err = s.in.next()
		}
		return err
	}
	for i := 0; ; i++ {
		if err := element(i); err != nil {
			return err
		}
		c, err := s.in.next()
		switch {
		case err != nil:
			return err
		case c == ']':
			return nil
		case c != ',':
			return fmt.Errorf("%s: invalid character %q at byte %d after array element", at, c, s.in.off-1)
		}
	}
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

// eofError names a file that ends too early as what it most likely is.
func eofError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("unexpected end of input (a truncated file?)")
	}
	return err
}
