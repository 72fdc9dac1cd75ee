# hierad: the ConfigDB and Hiera lookup server.
#   docker build -t hierad .
#   docker run -p 8750:8750 -v hierad-data:/var/lib/hierad hierad
FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
RUN cargo build --release --locked --bin hierad

FROM debian:bookworm-slim
RUN useradd --system --home-dir /var/lib/hierad --create-home hierad
COPY --from=build /src/target/release/hierad /usr/local/bin/hierad
COPY data /usr/share/hierad/sample
USER hierad
VOLUME /var/lib/hierad
EXPOSE 8750
ENV HIERAD_LISTEN=0.0.0.0:8750 \
    HIERAD_DB=/var/lib/hierad/hierad.db
ENTRYPOINT ["hierad"]
CMD ["serve", "--sample", "/usr/share/hierad/sample"]
