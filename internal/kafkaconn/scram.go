package kafkaconn

import "github.com/xdg-go/scram"

// sarama speaks the SCRAM exchange's framing but leaves the SCRAM client itself to the
// caller (Config.Net.SASL.SCRAMClientGeneratorFunc); xdg-go/scram is the implementation
// sarama's own examples and tests use.

// scramClient implements sarama.SCRAMClient for one authentication exchange.
type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func newSCRAMClient(h scram.HashGeneratorFcn) *scramClient { return &scramClient{hash: h} }

// Begin prepares the exchange for user and password (authzID is unused by Kafka).
func (c *scramClient) Begin(user, password, authzID string) error {
	cl, err := c.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	c.conv = cl.NewConversation()
	return nil
}

// Step answers one server challenge.
func (c *scramClient) Step(challenge string) (string, error) { return c.conv.Step(challenge) }

// Done reports whether the exchange has finished.
func (c *scramClient) Done() bool { return c.conv.Done() }
