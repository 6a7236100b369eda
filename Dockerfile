# syntax=docker/dockerfile:1
# Dockerfile — adcp-ledger on Debian 12 slim (docs/packaging.md). Two stages:
# build (compilers, -dev packages) and run (runtime libraries only, a non-root
# user). The image's entry point is the CLI; its default command is the
# maintenance worker:
#   docker build -t adcp-ledger .
#   docker run -e ADCP_DATABASE_URL=postgresql://... adcp-ledger            # maintain
#   docker run -e ADCP_DATABASE_URL=postgresql://... adcp-ledger verify --all
FROM debian:12-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake pkg-config ca-certificates \
      libssl-dev libpq-dev libsqlite3-dev libcurl4-openssl-dev libdeflate-dev libisal-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt Makefile ./
COPY cmake cmake
COPY include include
COPY src src
COPY migrations migrations
COPY scripts scripts
COPY bench bench
COPY packaging packaging
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DADCP_TESTS=OFF -DADCP_WERROR=OFF \
 && cmake --build build -j"$(nproc)" --target adcp-ledger adcp_ledger_shared manual \
 && DESTDIR=/out cmake --install build --prefix /usr/local

FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libssl3 libpq5 libsqlite3-0 libcurl4 libdeflate0 libisal2 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system adcp-ledger \
 && useradd --system --gid adcp-ledger --home-dir /var/lib/adcp-ledger --create-home \
      --shell /usr/sbin/nologin adcp-ledger \
 && mkdir -p /etc/adcp-ledger
COPY --from=build /out/usr/local /usr/local
RUN ldconfig && adcp-ledger --version
USER adcp-ledger
WORKDIR /var/lib/adcp-ledger
# The embedded SQLite default lives in the volume; production passes a
# postgresql:// URL (never baked into the image) and mounts /etc/adcp-ledger/config.
ENV ADCP_DATABASE_URL=sqlite:/var/lib/adcp-ledger/ledger.db
VOLUME ["/var/lib/adcp-ledger"]
ENTRYPOINT ["adcp-ledger"]
CMD ["maintain"]
