# isupgw: a static binary on an empty base image, running as an unprivileged
# user (uid 65532) with the reference configuration (examples/isupgw.yaml).
#
# Build: docker build --build-arg VERSION=$(git describe --always) \
#          --build-arg COMMIT=$(git rev-parse HEAD) -t isupgw .
# Run:   docker run -d --name isupgw -e ISUPGW_TOKEN=s3cret \
#          -v isupgw-state:/var/lib/isupgw \
#          -v $PWD/isupgw.yaml:/etc/isupgw/isupgw.yaml:ro \
#          -p 2905:2905/sctp -p 9899:9899/udp -p 7700:7700 -p 9700:9700 isupgw
#        (or the token from a file readable by uid 65532:
#          -v $PWD/token:/etc/isupgw/token:ro instead of -e ISUPGW_TOKEN)
# Without the isupgw.yaml mount the image runs examples/isupgw.yaml as it is:
# it listens on loopback only (the health check works, nothing outside the
# container reaches it) and its peers are documentation addresses. Mount your
# own, with the addresses the container should serve on (0.0.0.0 for all).
#
# The build image is pinned by its exact Go release tag, and GOTOOLCHAIN=local
# keeps the build on that toolchain (go.mod's go line may not download
# another). Pin by digest as well with
#   docker buildx imagetools inspect golang:1.26.8-bookworm
# and FROM golang:1.26.8-bookworm@sha256:<digest>. The run image is scratch:
# nothing in it that is not ours.
FROM golang:1.26.8-bookworm AS build
ENV GOTOOLCHAIN=local CGO_ENABLED=0
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
# The same script runs in CI (deploy/container's test).
RUN VERSION="${VERSION}" COMMIT="${COMMIT}" sh deploy/container/build.sh /out

FROM scratch
COPY --from=build /out/rootfs/ /
# The directories the gateway writes, owned by its user (layout.sh made them
# so; --chown says it again for engines that copy ownership as root).
COPY --from=build --chown=65532:65532 /out/rootfs/run/isupgw/ /run/isupgw/
COPY --from=build --chown=65532:65532 /out/rootfs/var/lib/isupgw/ /var/lib/isupgw/
USER 65532:65532
# M3UA over SCTP, M3UA over SCTP-over-UDP (RFC 6951), host API, metrics and status.
EXPOSE 2905/sctp 9899/udp 7700/tcp 9700/tcp
# Code Red exits with status 3: run with --restart=on-failure (Docker) or the
# default restart policy (Kubernetes) and keep /var/lib/isupgw on a volume.
VOLUME ["/var/lib/isupgw"]
# Fails when the gateway does not answer on its status address.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/isupgw", "status", "--addr", "127.0.0.1:9700"]
ENTRYPOINT ["/usr/local/bin/isupgw"]
CMD ["run", "--config", "/etc/isupgw/isupgw.yaml"]
