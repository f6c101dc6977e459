package archive

import (
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestForTarget(t *testing.T) {
	entry := func(off int64) Entry {
		return Entry{Key: migrate.Key{Group: "g", Topic: "t", Partition: 0}, Offset: ptr(off), Line: 3}
	}
	zkExport := File{Format: FormatJSON, Source: SourceZK, Entries: []Entry{entry(150)}}
	adjusted := File{Format: FormatJSON, Source: SourceZK, Adjust: 1, Entries: []Entry{entry(151)}}
	tests := []struct {
		name       string
		file       File
		to         Target
		adjust     int64
		want       int64 // the entry's offset after
		wantRecord int64 // the adjust the written offsets carry
		wantErr    string
	}{
		{name: "zk export to kafka as it is", file: zkExport, to: TargetKafka, want: 150},
		{name: "zk export to kafka, adjusted on the way", file: zkExport, to: TargetKafka, adjust: 1, want: 151, wantRecord: 1},
		{name: "adjusted export to kafka as it is", file: adjusted, to: TargetKafka, want: 151, wantRecord: 1},
		{name: "adjusted export back to zk: the znode values", file: adjusted, to: TargetZK, want: 150},
		{name: "zk export to zk as it is", file: zkExport, to: TargetZK, want: 150},
		{name: "adjusting twice", file: adjusted, to: TargetKafka, adjust: 1, wantErr: "already applied --offset-adjust +1"},
		{name: "adjust a plain zk export into zookeeper", file: zkExport, to: TargetZK, adjust: 1, wantErr: "--to zk"},
		{name: "adjusted export back to zk, the same adjust given", file: adjusted, to: TargetZK, adjust: 1, want: 150},
		{name: "adjusted export back to zk, another adjust", file: adjusted, to: TargetZK, adjust: 2, wantErr: "recorded adjust is +1"},
		{name: "kafka export into zookeeper for a last-consumed client", file: File{Format: FormatJSON, Source: SourceKafka, Entries: []Entry{entry(151)}},
			to: TargetZK, adjust: 1, want: 150},
		{name: "csv into zookeeper for a last-consumed client", file: File{Format: FormatCSV, Entries: []Entry{entry(151)}}, to: TargetZK, adjust: 1, want: 150},
		{name: "backup into zookeeper", file: File{Format: FormatBackup, Source: SourceKafka, Entries: []Entry{entry(9)}}, to: TargetZK, adjust: 1,
			wantErr: "not restored into ZooKeeper"},
		{name: "kafka export", file: File{Format: FormatJSON, Source: SourceKafka, Entries: []Entry{entry(9)}}, to: TargetKafka, adjust: 1,
			wantErr: "an export of kafka"},
		{name: "csv", file: File{Format: FormatCSV, Entries: []Entry{entry(9)}}, to: TargetKafka, adjust: 1, wantErr: "consumer-groups CSV"},
		{name: "backup", file: File{Format: FormatBackup, Source: SourceKafka, Entries: []Entry{entry(9)}}, to: TargetKafka, adjust: -1,
			wantErr: "a copy's backup"},
		{name: "below zero", file: File{Format: FormatJSON, Source: SourceZK, Entries: []Entry{entry(0)}}, to: TargetKafka, adjust: -1,
			wantErr: "line 3: g/t/0 offset 0 shifted by -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := *tt.file.Entries[0].Offset
			got, rec, err := tt.file.ForTarget(tt.to, tt.adjust)
			if *tt.file.Entries[0].Offset != before {
				t.Fatal("ForTarget changed the file it was given")
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got.Entries[0].Offset != tt.want || rec != tt.wantRecord {
				t.Errorf("offset %d, recorded adjust %d; want %d, %d", *got.Entries[0].Offset, rec, tt.want, tt.wantRecord)
			}
		})
	}
}

// TestExportAdjustRoundTrip: an export made with an adjust says so and reads back as it was
// written; an adjust on an export of Kafka is refused by the parser.
func TestExportAdjustRoundTrip(t *testing.T) {
	legacy := []migrate.LegacyGroup{{Group: "g", Offsets: []migrate.LegacyOffset{
		{Topic: "t", Partition: 0, Offset: 150, Path: "/consumers/g/offsets/t/0"},
		{Topic: "t", Partition: 1, Offset: 0, Path: "/consumers/g/offsets/t/1"},
	}}}
	e := FromLegacy(legacy, migrate.FilterSpec{}, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), -1)
	if len(e.Offsets) != 1 || e.Offsets[0].Offset != 149 || *e.Offsets[0].ZnodeOffset != 150 || len(e.Invalid) != 1 {
		t.Fatalf("export %+v", e)
	}
	var b strings.Builder
	if err := WriteJSON(&b, e); err != nil {
		t.Fatal(err)
	}
	f, err := Parse([]byte(b.String()))
	if err != nil || f.Adjust != -1 || *f.Entries[0].Offset != 149 {
		t.Fatalf("parse: %+v, %v", f, err)
	}
	bad := strings.Replace(b.String(), `"source": "zk"`, `"source": "kafka"`, 1)
	if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "only a ZooKeeper export is adjusted") {
		t.Fatalf("adjusted export of kafka: %v", err)
	}
}

// TestRestoreFollowsTheExportsGroupMap: a ZooKeeper export made under --group-map records it;
// restore --to kafka given no map lands the offsets where that map says (it used to write them
// into the legacy names), and refuses another map.
func TestRestoreFollowsTheExportsGroupMap(t *testing.T) {
	legacy := []migrate.LegacyGroup{{Group: "a", Offsets: []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 5, Path: "/consumers/a/offsets/t/0"}}}}
	spec := migrate.FilterSpec{GroupMap: []migrate.GroupMapping{{Legacy: "a", Kafka: "k"}}}
	var b strings.Builder
	if err := WriteJSON(&b, FromLegacy(legacy, spec, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), 0)); err != nil {
		t.Fatal(err)
	}
	f, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		given   migrate.GroupMap
		to      Target
		want    string
		wantErr string
	}{
		{name: "no map given: the export's", to: TargetKafka, want: "a=k"},
		{name: "the same map given", given: migrate.GroupMap{"a": "k"}, to: TargetKafka, want: "a=k"},
		{name: "another map given", given: migrate.GroupMap{"a": "z"}, to: TargetKafka, wantErr: "another group map (a=k)"},
		{name: "into zookeeper: the legacy names", to: TargetZK, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := RestoreRequest{To: tt.to}
			req.Filter.GroupMap = tt.given
			gm, err := restoreGroupMap(req, f)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || gm.String() != tt.want {
				t.Fatalf("map %q, err %v; want %q", gm, err, tt.want)
			}
		})
	}
}
