package clientprops

import (
	"crypto/tls"
	"fmt"

	"github.com/zk2kafka/zk2kafka/internal/secret"
	"github.com/zk2kafka/zk2kafka/internal/tlsconf"
)

// ZooKeeperTLS reads a ZooKeeper TLS file in the names Kafka's tools take (zookeeper.ssl.*, as
// for --zk-tls-config-file), or in ZooKeeper's own client names (zookeeper.client.secure,
// zookeeper.ssl.keyStore.location ...). It returns nil when the file turns TLS off
// (zookeeper.ssl.client.enable=false) and names no store.
func ZooKeeperTLS(path string) (*tls.Config, error) {
	f, err := load(path)
	if err != nil {
		return nil, fmt.Errorf("--zk-tls-config-file: %w", err)
	}
	enabled, err := f.bool(false, "zookeeper.ssl.client.enable", "zookeeper.client.secure")
	if err != nil {
		return nil, err
	}
	if sock := f.str("zookeeper.clientCnxnSocket"); sock != "" && sock != "org.apache.zookeeper.ClientCnxnSocketNetty" && sock != "org.apache.zookeeper.ClientCnxnSocketNIO" {
		return nil, fmt.Errorf("%s: zookeeper.clientCnxnSocket: %q is not a ZooKeeper client socket (ClientCnxnSocketNetty for TLS)", path, sock)
	}
	store := func(kind, kafkaKey, zkKey string) tlsconf.Store {
		return tlsconf.Store{
			Setting:  "zookeeper.ssl." + kind + ".location",
			Path:     f.str("zookeeper.ssl."+kafkaKey+".location", "zookeeper.ssl."+zkKey+".location"),
			Password: secret.Secret(f.str("zookeeper.ssl."+kafkaKey+".password", "zookeeper.ssl."+zkKey+".password")),
			Type:     f.str("zookeeper.ssl."+kafkaKey+".type", "zookeeper.ssl."+zkKey+".type"),
		}
	}
	files := tlsconf.Files{What: "zookeeper TLS", KeyStore: store("keystore", "keystore", "keyStore"),
		TrustStore: store("truststore", "truststore", "trustStore")}
	check, err := f.bool(true, "zookeeper.ssl.endpoint.identification.enable", "zookeeper.ssl.hostnameVerification")
	if err != nil {
		return nil, err
	}
	files.NoHostnameCheck = !check
	protocolKey, enabledKey, suitesKey := "zookeeper.ssl.protocol", "zookeeper.ssl.enabled.protocols", "zookeeper.ssl.cipher.suites"
	protocol := f.str(protocolKey)
	enabledProtocols := f.str(enabledKey, "zookeeper.ssl.enabledProtocols")
	suites := f.str(suitesKey, "zookeeper.ssl.ciphersuites")
	for _, key := range []string{"zookeeper.ssl.crl.enable", "zookeeper.ssl.ocsp.enable"} {
		on, err := f.bool(false, key)
		if err != nil {
			return nil, err
		}
		if on {
			return nil, fmt.Errorf("%s: %s=true: zk2kafka does not check revocation (CRL, OCSP); remove the key or set it false", path, key)
		}
	}
	if err := f.unknown("ZooKeeper TLS files take the zookeeper.ssl.* names of Kafka's --zk-tls-config-file"); err != nil {
		return nil, err
	}
	if !enabled {
		if files.KeyStore.Path != "" || files.TrustStore.Path != "" {
			return nil, fmt.Errorf("%s: key or trust stores are given but zookeeper.ssl.client.enable is not true: TLS would be off", path)
		}
		return nil, nil
	}
	c, err := files.Config()
	if err != nil {
		return nil, err
	}
	if err := tlsVersions(c, path, protocolKey, protocol, enabledKey, enabledProtocols); err != nil {
		return nil, err
	}
	if c.CipherSuites, err = cipherSuites(path, suitesKey, suites); err != nil {
		return nil, err
	}
	return c, nil
}
