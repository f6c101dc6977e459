package verify

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The JUnit XML layout CI systems (Jenkins, GitLab, GitHub Actions reporters) read: one
// <testsuites> with one <testsuite>, one <testcase> per group, one <failure> per partition that
// failed. Several <failure> elements in one test case are accepted by those readers and keep
// every mismatched partition visible, not only the first.

// JUnitSuites is the document root.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is the one test suite of a verify run.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []JUnitProperty `xml:"properties>property"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is one name=value of the suite (the options).
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one group.
type JUnitCase struct {
	Name      string         `xml:"name,attr"`
	ClassName string         `xml:"classname,attr"`
	Time      string         `xml:"time,attr"`
	Failures  []JUnitFailure `xml:"failure"`
	SystemOut string         `xml:"system-out,omitempty"`
}

// JUnitFailure is one failed partition: Type is its status, Message a one-line summary, Text
// the details (znode, offsets, reason).
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnitClassName is the classname of every test case.
const JUnitClassName = "zk2kafka.verify"

// JUnit builds the JUnit document of a report.
func JUnit(r Report) JUnitSuites {
	suite := JUnitSuite{
		Name: "zk2kafka migrate verify", Tests: len(r.Groups), Failures: r.Summary.GroupsFailed, Time: "0",
		Timestamp: r.CheckedAt.UTC().Format(time.RFC3339),
		Properties: []JUnitProperty{
			{Name: "strict", Value: strconv.FormatBool(r.Options.Strict)},
			{Name: "max-kafka-lead", Value: leadText(r.Options.MaxKafkaLead)},
			{Name: "partitions", Value: strconv.Itoa(r.Summary.Partitions)},
		},
		Cases: []JUnitCase{},
	}
	for _, g := range r.Groups {
		c := JUnitCase{Name: g.Label(), ClassName: JUnitClassName, Time: "0", SystemOut: groupCounts(g)}
		for _, p := range g.Failures() {
			c.Failures = append(c.Failures, JUnitFailure{
				Type:    string(p.Status),
				Message: fmt.Sprintf("%s/%d: %s: %s", p.Topic, p.Partition, p.Status, p.Reason),
				Text: fmt.Sprintf("group %s topic %s partition %d\nzookeeper %s (znode %s)\nkafka %s\n%s",
					g.Group, p.Topic, p.Partition, opt(p.ZK), orNone(p.Znode), opt(p.Kafka), p.Reason),
			})
		}
		suite.Cases = append(suite.Cases, c)
	}
	return JUnitSuites{Name: "zk2kafka", Tests: suite.Tests, Failures: suite.Failures, Suites: []JUnitSuite{suite}}
}

// WriteJUnit writes the report as a JUnit XML document.
func WriteJUnit(w io.Writer, r Report) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(JUnit(r)); err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// groupCounts is the group's partitions per status, for <system-out>.
func groupCounts(g Group) string {
	n := map[Status]int{}
	for _, p := range g.Partitions {
		n[p.Status]++
	}
	parts := []string{}
	for _, st := range Statuses() {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	s := fmt.Sprintf("%d partition(s)", len(g.Partitions))
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	if g.KafkaState != "" {
		s += fmt.Sprintf("; Kafka group %s with %d member(s)", g.KafkaState, g.KafkaMembers)
	}
	if len(g.LiveConsumers) > 0 {
		s += fmt.Sprintf("; %d live legacy consumer(s)", len(migrate.Consumers(g.LiveConsumers)))
	}
	if g.Marked {
		s += "; marked migrated"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
