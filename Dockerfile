# The lockbench image, for clusters that pull from a registry (Kubernetes, Swarm):
#   docker build -t registry.example/lockbench:TAG --build-arg VERSION=TAG .
# It is the image 'lockbench image build lockbench' makes without a registry: the same static
# binary (CGO_ENABLED=0, -trimpath), the same numeric non-root user, entrypoint and working
# directory. Only this file's base images need a registry.

# Build: the Go toolchain, the module cache filled from go.mod/go.sum before the sources are
# copied, so that editing a .go file does not download the dependencies again.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false \
        -ldflags "-s -w -X main.version=${VERSION}" -o /out/lockbench ./cmd/lockbench \
    && mkdir -p /out/data && chmod 1777 /out/data \
    && printf 'root:x:0:0:root:/root:/sbin/nologin\nlockbench:x:65532:65532:lockbench:/data:/sbin/nologin\n' > /out/passwd \
    && printf 'root:x:0:\nlockbench:x:65532:\n' > /out/group

# Final: nothing but the binary. lockbench needs no shell, libc or CA bundle of the image
# (TLS to Redis takes --tls-ca-file, mounted by the orchestrator).
FROM scratch
COPY --from=build /out/lockbench /usr/local/bin/lockbench
COPY --from=build /out/passwd /etc/passwd
COPY --from=build /out/group /etc/group
COPY --from=build /out/data /data
COPY --from=build /out/data /tmp
ENV PATH=/usr/local/bin
USER 65532:65532
WORKDIR /data
ENTRYPOINT ["/usr/local/bin/lockbench"]
CMD ["version"]
