package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/zkreader"
)

// Legacy layouts: where in ZooKeeper the legacy offsets are and how they are written.
const (
	layoutConsumers = "consumers" // the Scala consumer: /consumers/<group>/offsets/<topic>/<partition>
	layoutStorm     = "storm"     // Storm's storm-kafka spout: <root>/<spout>/[<topic>/]partition_<N>, JSON
)

// layoutFlags select the legacy layout (global flags).
type layoutFlags struct {
	layout       string
	stormRoot    string
	stormSpoutID string
	stormGroup   string
}

func (l *layoutFlags) addFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&l.layout, "layout", layoutConsumers,
		`legacy offset layout: consumers (/consumers/<group>/offsets/<topic>/<partition>) or storm (a storm-kafka spout's JSON znodes <storm-zk-root>/<storm-spout-id>/[<topic>/]partition_<N>, read-only)`)
	f.StringVar(&l.stormRoot, "storm-zk-root", "", "with --layout storm: the spout's SpoutConfig.zkRoot, e.g. /kafka-spout-offsets (under the --zk chroot)")
	f.StringVar(&l.stormSpoutID, "storm-spout-id", "", "with --layout storm: the spout's SpoutConfig.id, the folder under --storm-zk-root")
	f.StringVar(&l.stormGroup, "storm-group", "", "with --layout storm: the Kafka group the spout's offsets go to (the group.id of the storm-kafka-client spout that replaces it)")
}

// check validates the layout flags before any connection.
func (l *layoutFlags) check() error {
	switch l.layout {
	case layoutConsumers:
		for name, v := range map[string]string{"storm-zk-root": l.stormRoot, "storm-spout-id": l.stormSpoutID, "storm-group": l.stormGroup} {
			if v != "" {
				return fmt.Errorf("--%s is only for --layout storm", name)
			}
		}
		return nil
	case layoutStorm:
		for name, v := range map[string]string{"storm-zk-root": l.stormRoot, "storm-spout-id": l.stormSpoutID, "storm-group": l.stormGroup} {
			if v == "" {
				return fmt.Errorf("--layout storm needs --%s", name)
			}
		}
		if err := l.stormLayout().Validate(); err != nil {
			return fmt.Errorf("--layout storm: %w", err)
		}
		return nil
	}
	return fmt.Errorf("--layout: %q is not one of %s, %s", l.layout, layoutConsumers, layoutStorm)
}

func (l *layoutFlags) isStorm() bool { return l.layout == layoutStorm }

func (l *layoutFlags) stormLayout() zkreader.StormLayout {
	return zkreader.StormLayout{Root: l.stormRoot, SpoutID: l.stormSpoutID, Group: l.stormGroup}
}

// storm is the Storm layout to open: a storm-kafka topology registers nothing while it runs, so
// whether it is stopped is the operator's --legacy-stopped.
func (g *globalOptions) storm() zkreader.StormLayout {
	s := g.stormLayout()
	s.Stopped = g.legacyStopped
	return s
}
