# syntax=docker/dockerfile:1
# The slot recovery server. Build: docker build -t slotrecovery/server .
# Run: see docker-compose.yml (docker compose up) for the services it needs.

ARG GO_VERSION=1.26

# --- build: a static binary, cross-compiled for the target platform ------------------
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Dependencies first, so that a code change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG TARGETOS TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/server ./cmd/server

# --- run: Debian slim, a non-root user, curl for the health check ------------------
FROM debian:bookworm-slim
# ca-certificates: TLS to Twilio, Stripe and managed Postgres/Redis; tzdata: shops'
# IANA time zones; curl: the HEALTHCHECK below.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin app
COPY --from=build /out/server /usr/local/bin/server
USER 10001:10001
ENV HTTP_ADDR=:8080
EXPOSE 8080
# Liveness only (/readyz also checks Postgres and Redis). Assumes the default port:
# change it here too when HTTP_ADDR moves.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/server"]
CMD ["serve"]
