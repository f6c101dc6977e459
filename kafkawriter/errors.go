package kafkawriter

import (
	"errors"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// ErrGroupActive marks a commit the coordinator refused because the group has live members
// (or is rebalancing): an admin commit (generation -1, no member id) is only accepted for an
// absent or Empty group. It is the core's migrate.ErrGroupActive, so the core can test for it
// without importing this package; errors wrapping it also wrap the broker's sarama.KError.
var ErrGroupActive = migrate.ErrGroupActive

// Kafka error codes newer than sarama's named KErrors (KIP-848 consumer groups, Kafka 3.7+).
const (
	errFencedMemberEpoch sarama.KError = 110 // FENCED_MEMBER_EPOCH
	errStaleMemberEpoch  sarama.KError = 113 // STALE_MEMBER_EPOCH
)

// IsGroupActive reports whether err says the group has live members in Kafka, so an admin
// commit was (and will be) refused until the group is Empty.
func IsGroupActive(err error) bool {
	if errors.Is(err, ErrGroupActive) {
		return true
	}
	var kerr sarama.KError
	return errors.As(err, &kerr) && groupActiveKError(kerr)
}

func groupActiveKError(kerr sarama.KError) bool {
	switch kerr {
	case sarama.ErrUnknownMemberId, sarama.ErrIllegalGeneration, sarama.ErrRebalanceInProgress,
		errFencedMemberEpoch, errStaleMemberEpoch:
		return true
	}
	return false
}

// kerrOrNil turns sarama's "no error" code into a nil error.
func kerrOrNil(k sarama.KError) error {
	if k == sarama.ErrNoError {
		return nil
	}
	return k
}

// authorizationHint names an ACL refusal the way Kafka's docs and broker logs do, and says
// which permission is missing: sarama's own text ("not authorized to access this group")
// names neither. "" for any other error.
func authorizationHint(k sarama.KError) string {
	switch k {
	case sarama.ErrGroupAuthorizationFailed:
		return "GROUP_AUTHORIZATION_FAILED (the Kafka user lacks the ACL: READ on the group to commit, DESCRIBE to read)"
	case sarama.ErrTopicAuthorizationFailed:
		return "TOPIC_AUTHORIZATION_FAILED (the Kafka user lacks the ACL: READ on the topic to commit, DESCRIBE to read)"
	case sarama.ErrClusterAuthorizationFailed:
		return "CLUSTER_AUTHORIZATION_FAILED (the Kafka user lacks an ACL on the cluster)"
	}
	return ""
}

// authPrefix is authorizationHint(err) followed by ": " when err is an ACL refusal, else "".
func authPrefix(err error) string {
	var k sarama.KError
	if errors.As(err, &k) {
		if h := authorizationHint(k); h != "" {
			return h + ": "
		}
	}
	return ""
}
