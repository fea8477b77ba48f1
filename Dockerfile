# isupgw: a static binary on a distroless base, running as a non-root user.
# Build: docker build -t isupgw .
# Run:   docker run --rm -v $PWD/isupgw.yaml:/etc/isupgw/isupgw.yaml:ro \
#          -p 9899:9899/udp -p 7700:7700 -p 9700:9700 isupgw
# The configuration must bind to 0.0.0.0 inside the container (the embedded
# default binds to loopback only); see examples/isupgw.yaml.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/isupgw ./cmd/isupgw

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/isupgw /usr/local/bin/isupgw
# M3UA over SCTP, M3UA over SCTP-over-UDP (RFC 6951), host API, metrics and status.
EXPOSE 2905/sctp 9899/udp 7700/tcp 9700/tcp
USER nonroot:nonroot
# Code Red exits with status 3: run with --restart=on-failure (Docker) or the
# default restart policy (Kubernetes) and keep /var/lib/isupgw on a volume.
VOLUME ["/var/lib/isupgw"]
HEALTHCHECK --interval=10s --timeout=5s --retries=3 CMD ["/usr/local/bin/isupgw", "status", "--addr", "127.0.0.1:9700"]
ENTRYPOINT ["/usr/local/bin/isupgw"]
CMD ["run", "--config", "/etc/isupgw/isupgw.yaml"]
