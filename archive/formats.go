package archive

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/strictjson"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// The keys each object may have are its Go type's JSON field names (strictjson); these are the
// ones it must have.
var (
	exportKeys     = strictjson.FieldNames(reflect.TypeFor[Document]())
	exportRequired = []string{"schema_version", "source", "exported_at", "offsets"}
	offsetRequired = []string{"group", "topic", "partition", "offset"}
	invalidKeys    = strictjson.FieldNames(reflect.TypeFor[Invalid]())
)

// parseExport reads the export document as a token stream, so that every offset is named by
// the line it starts on.
func parseExport(body []byte, errs *errList) File {
	f := File{Format: FormatJSON}
	if !checkExportDocument(body, errs) {
		return f
	}
	// strictjson.Object has checked the syntax and the keys: the stream below cannot go wrong but
	// in a value's own layout, which each case reports.
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		errs.add(1, "export document: %v", err)
		return f
	}
	for dec.More() {
		if !parseExportKey(body, dec, &f, errs) {
			return f
		}
	}
	if f.Adjust != 0 && f.Source != SourceZK {
		errs.add(1, "offset_adjust %+d in an export of %s: only a ZooKeeper export is adjusted", f.Adjust, f.Source)
	}
	fileGroupMap(&f, errs)
	return f
}

// checkExportDocument checks the document as a whole before it is streamed: the schema
// version this zk2kafka reads, then the syntax and the keys. False: it is not readable.
func checkExportDocument(body []byte, errs *errList) bool {
	var version struct {
		V *int `json:"schema_version"`
	}
	if json.Unmarshal(body, &version) == nil && version.V != nil && *version.V != SchemaVersion {
		errs.add(1, "export schema_version %d, this zk2kafka reads %d", *version.V, SchemaVersion)
		return false
	}
	if at, err := strictjson.Object(body, exportKeys, exportRequired, nil); err != nil {
		errs.add(errorLine(body, at, err), "export document: %v", err)
		return false
	}
	return true
}

// parseExportKey reads one key of the document and its value into f; false means the stream
// is broken and parsing must stop.
func parseExportKey(body []byte, dec *json.Decoder, f *File, errs *errList) bool {
	tok, err := dec.Token()
	if err != nil {
		errs.add(lineAt(body, dec.InputOffset()), "export document: %v", err)
		return false
	}
	key, _ := tok.(string)
	if key == "offsets" {
		return parseOffsets(body, dec, f, errs)
	}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		errs.add(lineAt(body, dec.InputOffset()), "%s: %v", key, err)
		return false
	}
	if err := exportField(f, key, raw); err != nil {
		errs.add(lineAt(body, dec.InputOffset()-int64(len(raw))), "%s: %v", key, err)
	}
	return true
}

// exportField checks the value of one key of the document other than offsets, keeping in f
// what a restore needs of it.
func exportField(f *File, key string, raw json.RawMessage) error {
	switch key {
	case "schema_version":
		var v int
		return json.Unmarshal(raw, &v)
	case "source":
		if err := json.Unmarshal(raw, &f.Source); err != nil {
			return err
		}
		if f.Source != SourceZK && f.Source != SourceKafka {
			return fmt.Errorf("%q, expected zk or kafka", f.Source)
		}
	case "exported_at":
		var t time.Time
		return json.Unmarshal(raw, &t)
	case "offset_adjust":
		return json.Unmarshal(raw, &f.Adjust)
	case "filter":
		if string(raw) == "null" {
			return nil
		}
		var spec migrate.FilterSpec
		if _, err := strictjson.Decode(raw, &spec, nil, nil); err != nil {
			return err
		}
		var err error
		f.Recorded, err = spec.Map()
		return err
	case "invalid":
		return checkInvalid(raw)
	}
	return nil
}

// errorLine is the line of a problem found at byte at. A json.Decoder reports syntax errors
// relative to the value it was decoding, so for those the whole body is checked again with
// json.Unmarshal, whose offsets are absolute (only on this failure path: it scans the file).
func errorLine(body []byte, at int64, err error) int {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if err := json.Unmarshal(body, new(json.RawMessage)); errors.As(err, &se) {
			return lineAt(body, se.Offset)
		}
	}
	return lineAt(body, at)
}

// parseOffsets reads the offsets array, one element at a time; false means the stream is
// broken and parsing must stop.
func parseOffsets(body []byte, dec *json.Decoder, f *File, errs *errList) bool {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		errs.add(lineAt(body, dec.InputOffset()), "offsets: expected an array")
		return false
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			errs.add(lineAt(body, dec.InputOffset()), "offsets[%d]: %v", i, err)
			return false
		}
		line := lineAt(body, dec.InputOffset()-int64(len(raw)))
		var o Offset
		if _, err := strictjson.Decode(raw, &o, offsetRequired, nil); err != nil {
			errs.add(line, "offsets[%d]: %v", i, err)
			continue
		}
		e := Entry{Key: migrate.Key{Group: o.Group, Topic: o.Topic, Partition: o.Partition}, Offset: ptr(o.Offset), Line: line}
		e.KafkaGroup = o.KafkaGroup
		if o.Mtime != nil {
			e.Mtime = *o.Mtime
		}
		checkEntry(f, errs, e)
	}
	if _, err := dec.Token(); err != nil {
		errs.add(lineAt(body, dec.InputOffset()), "offsets: %v", err)
		return false
	}
	return true
}

// checkInvalid checks the layout of the informational list of invalid znodes.
func checkInvalid(raw []byte) error {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return err
	}
	for i, it := range items {
		var inv Invalid
		if _, err := strictjson.Decode(it, &inv, invalidKeys, nil); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

// parseBackup reads a copy's backup (copier.ParseBackup: the format is written and read
// there) into entries: each record puts back kafka_before where Kafka still holds target.
func parseBackup(body []byte, errs *errList) File {
	f := File{Format: FormatBackup, Source: SourceKafka}
	records := copier.ParseBackup(body, func(line int, msg string) { errs.add(line, "%s", msg) })
	for _, r := range records {
		checkEntry(&f, errs, Entry{Key: migrate.Key{Group: r.Group, Topic: r.Topic, Partition: r.Partition},
			Offset: r.KafkaBefore, Expect: ptr(r.Target), Line: r.Line})
	}
	return f
}

// parseCSV reads the consumer-groups tool's reset files, no header (a first line naming the
// columns is accepted as one): group,topic,partition,offset lines, or, for the one group in
// groups, topic,partition,offset lines. The first line decides the form for the whole file.
func parseCSV(body []byte, groups []string, errs *errList) File {
	f := File{Format: FormatCSV}
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1 // counted here, for a clearer message
	columns, formLine := 0, 0
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return f
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			errs.add(pe.Line, "not valid CSV: %v", pe.Err)
			return f
		} else if err != nil {
			errs.add(0, "read CSV: %v", err)
			return f
		}
		line, _ := r.FieldPos(0)
		if line == 1 && (slices.Equal(rec, csvHeader) || slices.Equal(rec, csvHeader[1:])) {
			continue
		}
		switch {
		case len(rec) != 3 && len(rec) != 4:
			errs.add(line, "%d fields, expected group,topic,partition,offset (or topic,partition,offset with one --group)", len(rec))
			continue
		case columns == 0:
			columns, formLine = len(rec), line
			if columns == 3 && len(groups) != 1 {
				errs.add(line, "%s", singleGroupForm(groups))
				return f
			}
		case len(rec) != columns:
			errs.add(line, "%d fields, expected %s as on line %d", len(rec), strings.Join(csvHeader[4-columns:], ","), formLine)
			continue
		}
		group := groups
		if columns == 4 {
			group, rec = rec[:1], rec[1:]
		}
		p, perr := digits(rec[1], 31)
		o, oerr := digits(rec[2], 63)
		if perr != nil || oerr != nil {
			if perr != nil {
				errs.add(line, "partition %q: %v", rec[1], perr)
			}
			if oerr != nil {
				errs.add(line, "offset %q: %v", rec[2], oerr)
			}
			continue
		}
		checkEntry(&f, errs, Entry{Key: migrate.Key{Group: group[0], Topic: rec[0], Partition: int32(p)}, Offset: ptr(o), Line: line})
	}
}

// csvHeader names the columns; the last three are the single-group form's.
var csvHeader = []string{"group", "topic", "partition", "offset"}

// singleGroupForm explains a topic,partition,offset file read without exactly one group.
func singleGroupForm(groups []string) string {
	const form = "3 fields (topic,partition,offset): the consumer-groups tool's form for one group"
	if len(groups) == 0 {
		return form + ": add --group <name> to say whose offsets these are, or give group,topic,partition,offset lines"
	}
	return fmt.Sprintf("%s, and %d groups are selected (--group %s): give exactly one --group, or group,topic,partition,offset lines",
		form, len(groups), strings.Join(groups, ","))
}

// digits parses a non-negative decimal of at most bits bits: no sign, no spaces, no exponent.
func digits(s string, bits int) (int64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			if s[0] == '-' {
				return 0, errors.New("negative")
			}
			return 0, errors.New("not a non-negative decimal number")
		}
	}
	v, err := strconv.ParseInt(s, 10, bits+1)
	if err != nil {
		return 0, errors.New("too large")
	}
	return v, nil
}

// fileGroupMap reads the group map of an export made under one (its offsets' kafka_group):
// every offset of a group names the same Kafka group, none for a group the map left alone.
func fileGroupMap(f *File, errs *errList) {
	named := slices.ContainsFunc(f.Entries, func(e Entry) bool { return e.KafkaGroup != "" })
	if !named {
		return
	}
	if f.Source != SourceKafka {
		errs.add(1, "kafka_group in an export of %s: only an export --from kafka names the Kafka groups read", f.Source)
		return
	}
	m, line := migrate.GroupMap{}, map[string]int{}
	for _, e := range f.Entries {
		k := cmp.Or(e.KafkaGroup, e.Group)
		if prev, ok := m[e.Group]; ok && prev != k {
			errs.add(e.Line, "group %q: kafka_group %q, but the offset at line %d names %q", e.Group, k, line[e.Group], prev)
			continue
		}
		m[e.Group], line[e.Group] = k, e.Line
	}
	if err := m.Validate(); err != nil {
		errs.add(1, "kafka_group: %v", err)
		return
	}
	f.GroupMap = m
}
