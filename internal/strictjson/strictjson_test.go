package strictjson_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/strictjson"
)

type inner struct {
	Offset *int64 `json:"offset"`
}

type record struct {
	Group string     `json:"group"`
	At    time.Time  `json:"at,omitempty"`
	Inner inner      `json:"inner"`
	List  []inner    `json:"list"`
	Skip  string     `json:"-"`
	When  *time.Time `json:"when"`
}

func TestFieldNames(t *testing.T) {
	if got := strictjson.FieldNames(reflect.TypeFor[record]()); !slices.Equal(got, []string{"group", "at", "inner", "list", "when"}) {
		t.Errorf("FieldNames = %v", got)
	}
	all := strictjson.AllFieldNames(reflect.TypeFor[record]())
	if !all["offset"] || !all["group"] || all["-"] || all["Skip"] || len(all) != 6 {
		t.Errorf("AllFieldNames = %v", all)
	}
}

// TestDecode: one object of the type's exact keys, none repeated, the required ones present
// and not null (but for the nullable), nothing after it.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		wantErr  string
	}{
		{"ok", `{"group":"g","inner":{"offset":null},"when":null}`, ""},
		{"nullable null", `{"group":"g","when":null}`, ""},
		{"unknown key", `{"group":"g","grop":"h"}`, `unknown key "grop"`},
		{"case differs", `{"Group":"g"}`, `unknown key "Group"`},
		{"repeated key", `{"group":"g","group":"h"}`, `key "group" given twice`},
		{"required missing", `{"inner":{}}`, `missing key "group"`},
		{"required null", `{"group":null}`, `key "group" is null`},
		{"not an object", `[1]`, "not a JSON object"},
		{"trailing data", `{"group":"g"} {}`, "data after the JSON object"},
		{"nested unknown", `{"group":"g","inner":{"offst":1},"when":null}`, `unknown field "offst"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r record
			_, err := strictjson.Decode([]byte(tc.in), &r, []string{"group", "when"}, []string{"when"})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Decode(%s) = %v, want %q", tc.in, err, tc.wantErr)
			}
		})
	}
}

// TestCheckKeys: the scan over a whole document refuses unknown and repeated keys at any depth,
// and never takes a brace or quote inside a string for structure.
func TestCheckKeys(t *testing.T) {
	known := map[string]bool{"a": true, "b": true}
	for _, tc := range []struct {
		in      string
		wantErr string
	}{
		{`{"a":{"b":"}{\"c\":1"},"b":[{"a":1},{"b":2}]}`, ""},
		{`{"a":[{"b":1},{"c":2}]}`, `$.a[1]: unknown field "c"`},
		{`{"a":1,"b":2,"a":3}`, `field "a" appears twice`},
		{strings.Repeat("[", strictjson.MaxDepth+1), "nested deeper"},
	} {
		err := strictjson.CheckKeys([]byte(tc.in), known)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CheckKeys(%s) = %v, want %q", tc.in, err, tc.wantErr)
		}
	}
}
