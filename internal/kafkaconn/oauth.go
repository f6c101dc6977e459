package kafkaconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// OAuth is SASL OAUTHBEARER's login through OIDC client credentials (KIP-768): the token
// endpoint issues a token for the client id and secret, and a new one before the old expires.
type OAuth struct {
	TokenURL     string
	ClientID     string
	ClientSecret Secret
	// Scope is space-separated, as the token request sends it; optional.
	Scope string
}

// tokenTimeout bounds one token request: sarama calls the provider while it connects.
const tokenTimeout = 30 * time.Second

func (o OAuth) validate() error {
	if o.TokenURL == "" {
		return errors.New("kafka SASL OAUTHBEARER: no token endpoint given (--kafka-sasl-oauth-token-url, or sasl.oauthbearer.token.endpoint.url)")
	}
	u, err := url.Parse(o.TokenURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("kafka SASL OAUTHBEARER: token endpoint %q is not an http(s) URL", o.TokenURL)
	}
	if o.ClientID == "" {
		return errors.New("kafka SASL OAUTHBEARER: no client id given (--kafka-sasl-oauth-client-id, or clientId= in sasl.jaas.config)")
	}
	if o.ClientSecret == "" {
		return fmt.Errorf("kafka SASL OAUTHBEARER: client %q: no client secret given", o.ClientID)
	}
	return nil
}

func (o OAuth) apply(conf *sarama.Config) error {
	conf.Net.SASL.TokenProvider = newTokenProvider(o)
	return nil
}

// tokenProvider hands sarama a token, fetching a new one once the last is within the refresh
// margin of its expiry, so that a run of days keeps authenticating (and re-authenticating where
// the broker sets connections.max.reauth.ms).
type tokenProvider struct {
	o   OAuth
	src oauth2.TokenSource
	mu  sync.Mutex
}

func newTokenProvider(o OAuth) *tokenProvider {
	cc := &clientcredentials.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret.Reveal(), TokenURL: o.TokenURL}
	if o.Scope != "" {
		cc.Scopes = strings.Fields(o.Scope)
	}
	// ReuseTokenSource renews a token 10 s before its expiry, or at once when it has none.
	return &tokenProvider{o: o, src: oauth2.ReuseTokenSource(nil, tokenSource{cc})}
}

// tokenSource asks the endpoint with a bounded context: clientcredentials' own TokenSource keeps
// the context it was made with for every later request.
type tokenSource struct{ cc *clientcredentials.Config }

func (s tokenSource) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tokenTimeout)
	defer cancel()
	return s.cc.Token(ctx)
}

func (p *tokenProvider) Token() (*sarama.AccessToken, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, err := p.src.Token()
	if err != nil {
		return nil, fmt.Errorf("kafka SASL OAUTHBEARER: token endpoint %s refused client %q (wrong client id or secret, or the endpoint is down): %w",
			p.o.TokenURL, p.o.ClientID, redactSecret(err, p.o.ClientSecret))
	}
	if !t.Expiry.IsZero() && !t.Expiry.After(time.Now()) {
		return nil, fmt.Errorf("kafka SASL OAUTHBEARER: token endpoint %s issued client %q a token that expired at %s (is this machine's clock right?)",
			p.o.TokenURL, p.o.ClientID, t.Expiry.UTC().Format(time.RFC3339))
	}
	return &sarama.AccessToken{Token: t.AccessToken}, nil
}

// redactSecret keeps the secret out of an endpoint's error, which may echo the request.
func redactSecret(err error, s Secret) error {
	if s == "" || !strings.Contains(err.Error(), s.Reveal()) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), s.Reveal(), s.String()))
}
