package cmd

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/internal/clientprops"
	"github.com/zk2kafka/zk2kafka/internal/tlsconf"
)

// zkTLSFlags are the TLS settings of the ZooKeeper connection: PEM files, or a ZooKeeper TLS
// file in the zookeeper.ssl.* names of Kafka's tools.
type zkTLSFlags struct {
	on         bool
	caFile     string
	certFile   string
	keyFile    string
	serverName string
	configFile string
}

func (z *zkTLSFlags) addFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.BoolVar(&z.on, "zk-tls", false, "connect to ZooKeeper over TLS (its secureClientPort)")
	f.StringVar(&z.caFile, "zk-tls-ca-file", "", "PEM file of the CAs that sign the ZooKeeper servers' certificates (default: the system's)")
	f.StringVar(&z.certFile, "zk-tls-cert-file", "", "PEM client certificate for ZooKeeper's mutual TLS (with --zk-tls-key-file)")
	f.StringVar(&z.keyFile, "zk-tls-key-file", "", "PEM client private key for ZooKeeper's mutual TLS (with --zk-tls-cert-file)")
	f.StringVar(&z.serverName, "zk-tls-server-name", "", "name to check the ZooKeeper servers' certificates against (default: the host in --zk)")
	f.StringVar(&z.configFile, "zk-tls-config-file", "", "ZooKeeper TLS settings in the zookeeper.ssl.* names of Kafka's --zk-tls-config-file "+
		"(JKS, PKCS12 or PEM stores); instead of the other --zk-tls flags")
}

// config is the TLS of the ZooKeeper connection, reading its files; nil for plain TCP.
func (z *zkTLSFlags) config() (*tls.Config, error) {
	pem := map[string]bool{"--zk-tls-ca-file": z.caFile != "", "--zk-tls-cert-file": z.certFile != "", "--zk-tls-key-file": z.keyFile != "",
		"--zk-tls-server-name": z.serverName != ""}
	if z.configFile != "" {
		for name, set := range pem {
			if set {
				return nil, fmt.Errorf("%s and --zk-tls-config-file are exclusive: the file holds every ZooKeeper TLS setting", name)
			}
		}
		c, err := clientprops.ZooKeeperTLS(z.configFile)
		if err == nil && c == nil && z.on {
			err = fmt.Errorf("--zk-tls, but --zk-tls-config-file %s turns TLS off (zookeeper.ssl.client.enable is not true)", z.configFile)
		}
		return c, err
	}
	if !z.on {
		for name, set := range pem {
			if set {
				return nil, fmt.Errorf("%s is given but ZooKeeper TLS is not enabled (--zk-tls)", name)
			}
		}
		return nil, nil
	}
	return tlsconf.Files{What: "zookeeper TLS", CAFile: z.caFile, CertFile: z.certFile, KeyFile: z.keyFile, ServerName: z.serverName}.Config()
}

// errZKTLSDataDir: a data directory is read from disk, never over a connection.
var errZKTLSDataDir = errors.New("--zk-tls and --zk-tls-config-file connect to a running ZooKeeper: a data directory (--zk-data-dir) is read from disk")
