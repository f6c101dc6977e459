//go:build zk2kafkadev

// Command oidc is the secure stack's identity provider: a real HTTP server with an OAuth client
// credentials token endpoint (RFC 6749 section 4.4) issuing RS256-signed JWTs, and the JWKS
// endpoint that Kafka's own OIDC validation (OAuthBearerValidatorCallbackHandler) fetches its
// key from. Used by scripts/stack; not a mock of Kafka, which validates every token itself.
//
//	oidc -addr 127.0.0.1:PORT -clients FILE -issued FILE
//
// Each line of the clients file is `id secret lifetime signer`: lifetime is a Go duration (a
// negative one issues tokens that expired already); signer is "jwks" for the key the JWKS
// endpoint publishes, or "foreign" for a key it does not (tokens Kafka must reject). Tokens are
// for the audience "kafka". The
// issued file gets one line per token issued, `id unix-seconds`, so that tests can see refreshes.
package main

import (
	"bufio"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

type client struct {
	secret   string
	lifetime time.Duration
	foreign  bool // signed with a key the JWKS endpoint does not publish
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	clientsFile := flag.String("clients", "", "clients file: id secret lifetime signer, one per line")
	issuedFile := flag.String("issued", "", "append one line per token issued")
	flag.Parse()
	clients, err := readClients(*clientsFile)
	if err != nil {
		log.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		log.Fatal(err)
	}
	foreign, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	s := &server{key: key, foreign: foreign, kid: "zk2kafka-test", issuer: "http://" + l.Addr().String(), clients: clients, issuedFile: *issuedFile}
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks", s.jwks)
	mux.HandleFunc("/token", s.token)
	log.Printf("oidc: listening on %s", l.Addr())
	log.Fatal(http.Serve(l, mux))
}

func readClients(path string) (map[string]client, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]client{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 4 {
			return nil, fmt.Errorf("%s: %q: want id secret lifetime signer", path, sc.Text())
		}
		d, err := time.ParseDuration(fs[2])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if fs[3] != "jwks" && fs[3] != "foreign" {
			return nil, fmt.Errorf("%s: signer %q: want jwks or foreign", path, fs[3])
		}
		out[fs[0]] = client{secret: fs[1], lifetime: d, foreign: fs[3] == "foreign"}
	}
	return out, sc.Err()
}

type server struct {
	key        *rsa.PrivateKey
	foreign    *rsa.PrivateKey
	kid        string
	issuer     string
	clients    map[string]client
	issuedFile string
	mu         sync.Mutex
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (s *server) jwks(w http.ResponseWriter, _ *http.Request) {
	pub := s.key.PublicKey
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": s.kid,
		"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
	}}})
}

// token serves the client credentials grant, the client authenticated by HTTP Basic (as
// Kafka's and golang.org/x/oauth2's clients send it) or by form fields.
func (s *server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c, known := s.clients[id]
	if !known || subtle.ConstantTimeCompare([]byte(secret), []byte(c.secret)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	now := time.Now()
	claims := map[string]any{"iss": s.issuer, "sub": id, "aud": "kafka", "iat": now.Unix(), "exp": now.Add(c.lifetime).Unix()}
	if scope := r.PostForm.Get("scope"); scope != "" {
		claims["scope"] = scope // Kafka's validator refuses an empty scope claim
	}
	key := s.key
	if c.foreign {
		key = s.foreign
	}
	tok, err := s.sign(key, claims)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	s.record(id, now)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(c.lifetime.Seconds())})
}

func (s *server) sign(key *rsa.PrivateKey, claims map[string]any) (string, error) {
	h, err := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": s.kid})
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	unsigned := b64(h) + "." + b64(p)
	sum := sha256.Sum256([]byte(unsigned))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return unsigned + "." + b64(sig), nil
}

func (s *server) record(id string, at time.Time) {
	if s.issuedFile == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.issuedFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		log.Printf("oidc: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %d\n", id, at.Unix())
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
