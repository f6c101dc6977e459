package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveMetrics serves /metrics, /healthz (liveness: the loop's heartbeat is recent) and /readyz
// (first sync done, watches armed, lease held) until the returned stop is called.
func serveMetrics(ctx context.Context, d *deps, addr string, o *dualObserver) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(o.m.reg, promhttp.HandlerOpts{}))
	probe := func(check func() error) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			if err := check(); err != nil {
				http.Error(w, "not ok: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok") //nolint:errcheck // the client went away
		}
	}
	mux.Handle("/healthz", probe(o.liveness))
	mux.Handle("/readyz", probe(o.readiness))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.logger.Error("metrics server stopped", "addr", addr, "err", err)
		}
	}()
	d.logger.Info("serving metrics", "addr", ln.Addr().String(), "paths", "/metrics /healthz /readyz")
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			d.logger.Warn("stopping the metrics server", "err", err)
		}
		<-done
	}, nil
}
