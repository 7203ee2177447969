# syntax=docker/dockerfile:1
# A static switchboard binary in an image of its own: multi-stage, no shell, non-root,
# `switchboard serve` as the entrypoint.
#
#   docker build -t switchboard --build-arg VERSION=$(git describe --tags --always) .
#   docker run -p 8080:8080 -v switchboard-data:/data -e SWITCHBOARD_ADMIN_TOKEN="$(openssl rand -base64 32)" switchboard

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
# CGO off: the SQLite driver (modernc.org/sqlite) is pure Go, so the binary is static.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/switchboard ./cmd/switchboard \
 && mkdir -p /out/data

FROM scratch
# CA roots for https hooks and webhooks.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/switchboard /switchboard
# The database lives in /data, owned by the unprivileged user the node runs as.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV SWITCHBOARD_LISTEN=0.0.0.0:8080 \
    SWITCHBOARD_DATABASE_URL=sqlite:/data/switchboard.db
EXPOSE 8080
VOLUME ["/data"]
ENTRYPOINT ["/switchboard", "serve"]
