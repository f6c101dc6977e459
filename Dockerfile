# The zk2kafka image: the static binary, a CA bundle for TLS to Kafka, nothing else; it runs as
# a non-root user. Its build context is a folder holding `zk2kafka` (linux, CGO_ENABLED=0) and
# `ca-certificates.crt`: `scripts/release --image TAG` makes one and builds with buildah, so the
# build pulls no base image.
FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="zk2kafka" \
      org.opencontainers.image.description="Migrate Kafka consumer-group offsets from ZooKeeper into Kafka" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY zk2kafka /zk2kafka
USER 65532:65532
ENTRYPOINT ["/zk2kafka"]
