# hierad: the ConfigDB and Hiera lookup server.
#   docker build -t hierad .
#   docker run -d -p 127.0.0.1:8750:8750 -v /srv/hierad:/var/lib/hierad hierad serve --insecure
# It listens on 0.0.0.0 inside the container, so it refuses to start
# without an auth file unless told --insecure (docs/security.md);
# publishing on 127.0.0.1 keeps that unauthenticated try on this host.
# With TLS and auth (the files readable by uid 8750: docs/deploy.md):
#   docker run -d -p 8750:8750 -v /srv/hierad:/var/lib/hierad -v /etc/hierad:/etc/hierad:ro hierad \
#     serve --auth /etc/hierad/auth.toml --tls-cert /etc/hierad/server.pem --tls-key /etc/hierad/server.key
# (HIERAD_AUTH, HIERAD_TLS_CERT and HIERAD_TLS_KEY may name them instead).
#
# The server runs as the unprivileged user hierad, uid and gid 8750 (fixed,
# so that host files can be handed to it). A volume the host created
# root-owned is handed to hierad by the entrypoint (which starts as root
# only for that) before it drops to hierad; started with --user, the
# entrypoint changes nothing and says so if the folder is not writable.
#
# Without a registry, or with a binary built on the host (`cargo build
# --release`), the `prebuilt` target takes the binary from the build
# context and any Debian bookworm base (docs/deploy.md, "Container image";
# tests/it/docker.rs builds it on a base made by mmdebstrap):
#   podman build --target prebuilt --build-arg BASE=localhost/debian:bookworm -t hierad .
ARG BASE=debian:bookworm-slim

FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
# The sample environment, and the override_resources schema set on it,
# are built into the binary (src/sample.rs).
COPY data ./data
COPY schemas ./schemas
RUN cargo build --release --locked --bin hierad

FROM ${BASE} AS base
RUN groupadd --gid 8750 hierad \
    && useradd --uid 8750 --gid 8750 --no-log-init --shell /usr/sbin/nologin \
        --home-dir /var/lib/hierad --create-home hierad
COPY docker/entrypoint.sh /usr/local/bin/hierad-entrypoint
COPY docker/health.sh /usr/local/bin/hierad-health
VOLUME /var/lib/hierad
WORKDIR /var/lib/hierad
EXPOSE 8750
ENV HIERAD_LISTEN=0.0.0.0:8750 \
    HIERAD_DB=/var/lib/hierad/hierad.db
# hierad-health: `hierad health` (/healthz, plain or TLS: the slim image
# has no curl, and a TLS server would refuse a plain-text probe) on the
# address the server was given, by --listen or HIERAD_LISTEN.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["hierad-health"]
ENTRYPOINT ["hierad-entrypoint"]
CMD ["serve"]

FROM base AS prebuilt
ARG HIERAD_BIN=target/release/hierad
COPY ${HIERAD_BIN} /usr/local/bin/hierad

FROM base AS runtime
COPY --from=build /src/target/release/hierad /usr/local/bin/hierad
