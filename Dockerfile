# hierad: the ConfigDB and Hiera lookup server.
#   docker build -t hierad .
#   docker run -d -p 8750:8750 -v /srv/hierad:/var/lib/hierad hierad
# The server runs as the unprivileged user hierad. A volume the host
# created root-owned is handed to hierad by the entrypoint (which starts
# as root only for that) before it drops to hierad; started with --user,
# the entrypoint changes nothing and says so if the folder is not
# writable. tests/it/docker.rs runs the build stage's commands in a clean
# folder (Docker itself cannot run there).
# It listens on 0.0.0.0, so it refuses to start without an auth file (or
# an explicit --insecure): docs/security.md. With TLS and auth:
#   docker run -d -p 8750:8750 -v /srv/hierad:/var/lib/hierad -v /etc/hierad:/etc/hierad:ro hierad \
#     serve --auth /etc/hierad/auth.toml --tls-cert /etc/hierad/server.pem --tls-key /etc/hierad/server.key
# (HIERAD_AUTH, HIERAD_TLS_CERT and HIERAD_TLS_KEY may name them instead).
FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
# The sample environment, and the override_resources schema set on it,
# are built into the binary (src/sample.rs).
COPY data ./data
COPY schemas ./schemas
RUN cargo build --release --locked --bin hierad

FROM debian:bookworm-slim
RUN useradd --system --home-dir /var/lib/hierad --create-home --user-group hierad
COPY --from=build /src/target/release/hierad /usr/local/bin/hierad
COPY docker/entrypoint.sh /usr/local/bin/hierad-entrypoint
VOLUME /var/lib/hierad
WORKDIR /var/lib/hierad
EXPOSE 8750
ENV HIERAD_LISTEN=0.0.0.0:8750 \
    HIERAD_DB=/var/lib/hierad/hierad.db
# hierad health: /healthz on HIERAD_LISTEN's port, plain or TLS (the slim
# image has no curl, and a TLS server would refuse a plain-text probe).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["hierad", "health"]
ENTRYPOINT ["hierad-entrypoint"]
CMD ["serve"]
