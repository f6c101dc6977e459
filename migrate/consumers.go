package migrate

import (
	"fmt"
	"slices"
	"strings"
)

// Consumers returns, sorted, the distinct legacy consumers that a group's liveness
// registrations (LegacyGroup.LiveConsumers) stand for. The Scala high-level consumer registers
// itself once as ids/<consumerId> and once more per partition it owns, as
// owners/<topic>/<partition> holding "<consumerId>-<thread>": one consumer owning four
// partitions is five registrations, and counting those overstated the consumers fivefold. So:
// "ids/<id>" is consumer <id>; "owners/<t>/<p>=<consumerId>-<n>" is <consumerId> (an owner
// whose data has no "-<n>" thread suffix is named by its whole data); a registration that
// could not be read (denied: "<path>: <why>", no "=") stands for a consumer of its own, named
// by the registration, since nobody can tell whose it is.
func Consumers(live []string) []string {
	out := make([]string, 0, len(live))
	for _, r := range live {
		out = append(out, consumerOf(r))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// consumerOf is the consumer one registration names.
func consumerOf(reg string) string {
	if id, ok := strings.CutPrefix(reg, "ids/"); ok && !strings.Contains(id, ": ") {
		return id
	}
	rest, ok := strings.CutPrefix(reg, "owners/")
	if !ok {
		return reg
	}
	_, data, ok := strings.Cut(rest, "=")
	if !ok || data == "" {
		return reg
	}
	if i := strings.LastIndexByte(data, '-'); i > 0 && isDigits(data[i+1:]) {
		return data[:i]
	}
	return data
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// consumersListed is how many consumers GateReason names before "and N more".
const consumersListed = 3

// GateReason names every gate of a planned group with the facts behind it, the legacy
// consumers counted as consumers (Consumers) and the first few named: the words a report says
// once per group. Empty for an ungated group.
func GateReason(gp GroupPlan) string {
	return gateWords(gp, true)
}

// gateWords names the gates; named adds the first consumers' names. An entry's reason carries
// the words without the names: a group's partitions all share them, and the names once per
// group are enough.
func gateWords(gp GroupPlan, named bool) string {
	var parts []string
	for _, g := range gp.Gates {
		switch g {
		case GateLegacyConsumersAlive:
			cs := Consumers(gp.LiveConsumers)
			s := fmt.Sprintf("%s (%s", g, plural(len(cs), "live legacy consumer"))
			if named {
				s += ": " + listShort(cs, consumersListed)
			}
			parts = append(parts, s+")")
		case GateKafkaGroupActive:
			state := gp.KafkaState
			if state == "" {
				state = "unknown"
			}
			if gp.KafkaGroup != "" {
				state = fmt.Sprintf("%q %s", gp.KafkaGroup, state)
			}
			parts = append(parts, fmt.Sprintf("%s (Kafka group %s, %s)", g, state, plural(gp.KafkaMembers, "member")))
		}
	}
	return strings.Join(parts, " and ")
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func listShort(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}
