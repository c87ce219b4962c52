# syntax=docker/dockerfile:1
# Lectern in a container: a static binary (CGO_ENABLED=0; SQLite is the
# pure-Go modernc.org/sqlite) on a small Alpine base that brings CA
# certificates (S3, Stripe, webhooks over HTTPS) and wget for the health
# check. See docs/ops/deploy.md.
#
#   docker build -t lectern --build-arg VERSION=$(git describe --always) .
#   docker run -d --name lectern -p 8080:8080 -p 7881:7881/udp -p 3478:3478/udp -p 3478:3478/tcp \
#     -v lectern-data:/data -e LECTERN_PUBLIC_URL=https://lms.example.com \
#     -e LECTERN_RTC_PUBLIC_IP=203.0.113.10 lectern

FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/lectern ./cmd/lectern

FROM alpine:3.22
RUN apk add --no-cache ca-certificates \
 && addgroup -S -g 10001 lectern \
 && adduser -S -D -H -u 10001 -G lectern -s /sbin/nologin lectern \
 && mkdir /data && chown lectern:lectern /data && chmod 750 /data
COPY --from=build /out/lectern /usr/local/bin/lectern
USER lectern:lectern
# Listen on every interface inside the container; the data dir is the volume.
ENV LECTERN_ADDR=:8080 \
    LECTERN_DATA_DIR=/data \
    LECTERN_LOG_FORMAT=json
VOLUME ["/data"]
# HTTP (both APIs, the classroom WebSocket), the classroom's media (UDP, one
# port for every room) and the embedded TURN relay (UDP and TCP).
EXPOSE 8080/tcp 7881/udp 3478/udp 3478/tcp
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD wget -q -O /dev/null http://127.0.0.1:8080/healthz || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["lectern"]
CMD ["serve"]
