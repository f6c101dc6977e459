package kafkaconn

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/IBM/sarama"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"
)

// DefaultKerberosServiceName is the first part of the brokers' principals, as Kafka's
// sasl.kerberos.service.name defaults it.
const DefaultKerberosServiceName = "kafka"

// Kerberos is SASL GSSAPI's login: a keytab, or the ticket cache kinit filled. sarama speaks
// the exchange (through gokrb5); this checks the files before any connection so that a wrong
// keytab or an expired ticket is an error naming the file, not a refused connection.
type Kerberos struct {
	// Principal is the client's principal, user@REALM (the realm defaults to krb5.conf's
	// default_realm). With the ticket cache it may be empty: the cache's own principal is used.
	Principal string
	// KeytabFile logs in with the principal's key; empty means the ticket cache.
	KeytabFile string
	// CCacheFile is the ticket cache; default $KRB5CCNAME (FILE: caches only) or
	// /tmp/krb5cc_<uid>, as MIT's tools use.
	CCacheFile string
	// ConfigFile is krb5.conf; default $KRB5_CONFIG or /etc/krb5.conf.
	ConfigFile string
	// ServiceName is the brokers' service principal's first part; default "kafka".
	ServiceName string
}

func (k Kerberos) configFile() string {
	if k.ConfigFile != "" {
		return k.ConfigFile
	}
	if env := os.Getenv("KRB5_CONFIG"); env != "" {
		return strings.Split(env, ":")[0]
	}
	return "/etc/krb5.conf"
}

func (k Kerberos) ccacheFile() string {
	if k.CCacheFile != "" {
		return k.CCacheFile
	}
	if env := os.Getenv("KRB5CCNAME"); env != "" {
		return strings.TrimPrefix(env, "FILE:")
	}
	return fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())
}

func (k Kerberos) serviceName() string {
	if k.ServiceName != "" {
		return k.ServiceName
	}
	return DefaultKerberosServiceName
}

// realm splits the principal into its name and realm, the realm defaulting to krb5.conf's.
func (k Kerberos) realm(cfg *krbconfig.Config) (name, realm string) {
	name, realm, ok := strings.Cut(k.Principal, "@")
	if !ok || realm == "" {
		realm = cfg.LibDefaults.DefaultRealm
	}
	return name, realm
}

// validate reads krb5.conf and the keytab or ticket cache: the principal must have a key in the
// keytab, or an unexpired ticket-granting ticket in the cache.
func (k Kerberos) validate() error {
	cfg, err := krbconfig.Load(k.configFile())
	if err != nil {
		return fmt.Errorf("kafka SASL GSSAPI: krb5.conf %s: %w (set --kafka-sasl-kerberos-config or KRB5_CONFIG)", k.configFile(), err)
	}
	if k.KeytabFile != "" {
		return k.validateKeytab(cfg)
	}
	return k.validateCCache(time.Now())
}

func (k Kerberos) validateKeytab(cfg *krbconfig.Config) error {
	if k.Principal == "" {
		return fmt.Errorf("kafka SASL GSSAPI: keytab %s: no principal given (--kafka-sasl-kerberos-principal, or principal= in sasl.jaas.config)", k.KeytabFile)
	}
	kt, err := keytab.Load(k.KeytabFile)
	if err != nil {
		return fmt.Errorf("kafka SASL GSSAPI: keytab %s: %w", k.KeytabFile, err)
	}
	name, realm := k.realm(cfg)
	if realm == "" {
		return fmt.Errorf("kafka SASL GSSAPI: principal %q names no realm and krb5.conf %s sets no default_realm", k.Principal, k.configFile())
	}
	pn, _ := types.ParseSPNString(name)
	var held []string
	for _, e := range kt.Entries {
		p := strings.Join(e.Principal.Components, "/") + "@" + e.Principal.Realm
		if e.Principal.Realm == realm && strings.Join(e.Principal.Components, "/") == pn.PrincipalNameString() {
			return nil
		}
		held = append(held, p)
	}
	return fmt.Errorf("kafka SASL GSSAPI: keytab %s holds no key for principal %s@%s (it holds: %s): wrong keytab or principal",
		k.KeytabFile, name, realm, strings.Join(dedupe(held), ", "))
}

func (k Kerberos) validateCCache(now time.Time) error {
	path := k.ccacheFile()
	cc, err := credentials.LoadCCache(path)
	if err != nil {
		return fmt.Errorf("kafka SASL GSSAPI: ticket cache %s: %w (run kinit, or give a keytab)", path, err)
	}
	client := cc.GetClientPrincipalName().PrincipalNameString() + "@" + cc.GetClientRealm()
	if k.Principal != "" && !samePrincipal(k.Principal, client) {
		return fmt.Errorf("kafka SASL GSSAPI: ticket cache %s holds tickets of %s, not of principal %s (kinit %s)", path, client, k.Principal, k.Principal)
	}
	tgt := "krbtgt/" + cc.GetClientRealm()
	for _, c := range cc.GetEntries() {
		if strings.Join(c.Server.PrincipalName.NameString, "/") != tgt {
			continue
		}
		if !c.EndTime.After(now) {
			return fmt.Errorf("kafka SASL GSSAPI: the ticket of %s in the ticket cache %s expired at %s: renew it with kinit", client, path, c.EndTime.UTC().Format(time.RFC3339))
		}
		return nil
	}
	return fmt.Errorf("kafka SASL GSSAPI: ticket cache %s holds no ticket-granting ticket of %s: run kinit", path, client)
}

func samePrincipal(given, cached string) bool {
	if strings.Contains(given, "@") {
		return given == cached
	}
	name, _, _ := strings.Cut(cached, "@")
	return given == name
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// apply sets sarama's GSSAPI settings. PA-FX-FAST is off: MIT KDCs without FAST armor refuse
// it, and Kafka's Java client does not use it either.
func (k Kerberos) apply(conf *sarama.Config) error {
	cfg, err := krbconfig.Load(k.configFile())
	if err != nil {
		return fmt.Errorf("kafka SASL GSSAPI: krb5.conf %s: %w", k.configFile(), err)
	}
	g := &conf.Net.SASL.GSSAPI
	g.KerberosConfigPath = k.configFile()
	g.ServiceName = k.serviceName()
	g.DisablePAFXFAST = true
	g.BuildSpn = func(service, host string) string { return service + "/" + brokerHostName(host) }
	if k.KeytabFile != "" {
		g.AuthType = sarama.KRB5_KEYTAB_AUTH
		g.KeyTabPath = k.KeytabFile
		g.Username, g.Realm = k.realm(cfg)
		return nil
	}
	g.AuthType = sarama.KRB5_CCACHE_AUTH
	g.CCachePath = k.ccacheFile()
	// sarama asks for the user and realm even when the cache names them.
	if k.Principal != "" {
		g.Username, g.Realm = k.realm(cfg)
	} else if cc, err := credentials.LoadCCache(g.CCachePath); err == nil {
		g.Username, g.Realm = cc.GetClientPrincipalName().PrincipalNameString(), cc.GetClientRealm()
	}
	return nil
}

// brokerHostName is the host part of the brokers' service principal, found as Kafka's Java
// client finds it: the host name the client connected to, and for an address given as an IP,
// the name it resolves back to.
func brokerHostName(host string) string {
	if net.ParseIP(host) == nil {
		return strings.ToLower(host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	names, err := net.DefaultResolver.LookupAddr(ctx, host)
	if err != nil || len(names) == 0 {
		return host
	}
	return strings.ToLower(strings.TrimSuffix(names[0], "."))
}

// kerberosError explains a failed GSSAPI login by what the KDC or the network said.
func (k Kerberos) kerberosError(addr string, err error) (error, bool) {
	msg := err.Error()
	who := k.Principal
	if who == "" {
		who = "the ticket cache's principal"
	}
	switch {
	case strings.Contains(msg, "KDC_ERR_C_PRINCIPAL_UNKNOWN"):
		return fmt.Errorf("kafka broker %s: the KDC does not know the client principal %s (check --kafka-sasl-kerberos-principal, or principal= in sasl.jaas.config): %w", addr, who, err), true
	case strings.Contains(msg, "KDC_ERR_S_PRINCIPAL_UNKNOWN"):
		return fmt.Errorf("kafka broker %s: the KDC has no service principal %s/<broker host>: check the service name (--kafka-sasl-kerberos-service-name, sasl.kerberos.service.name; now %q) and that the broker's host name is the one in its principal: %w",
			addr, k.serviceName(), k.serviceName(), err), true
	case strings.Contains(msg, "KDC_ERR_PREAUTH_FAILED"), strings.Contains(msg, "KRB_AP_ERR_BAD_INTEGRITY"), strings.Contains(msg, "keytab incorrect"):
		return fmt.Errorf("kafka broker %s: the KDC refused the key of %s: the keytab %s holds a wrong or outdated key: %w", addr, who, k.KeytabFile, err), true
	case strings.Contains(msg, "TKT_EXPIRED"):
		return fmt.Errorf("kafka broker %s: the Kerberos ticket of %s expired: renew it with kinit, or give a keytab: %w", addr, who, err), true
	case strings.Contains(strings.ToLower(msg), "networking_error"), strings.Contains(msg, "error sending to a KDC"):
		return fmt.Errorf("kafka broker %s: no KDC answered for %s (its kdc entries in krb5.conf %s): %w", addr, who, k.configFile(), err), true
	}
	return err, false
}
