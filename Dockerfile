# netdiag in a container (docs/deploy.md). Build: docker build -t netdiag .
# Run: docker run -p 8080:8080 -v netdiag-data:/app/data netdiag   (the first start prints the admin's link and token)
FROM node:20-bookworm-slim

# The path tools (ping, traceroute, mtr) and the CA roots for HTTPS checks; nothing else.
# The packages give ping and mtr-packet CAP_NET_RAW; traceroute gets it here, so ICMP and TCP
# traceroutes run as the unprivileged user below (docs/path-tools.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates iputils-ping traceroute mtr-tiny libcap2-bin \
 && setcap cap_net_raw+ep /usr/bin/traceroute.db \
 && apt-get purge -y libcap2-bin && apt-get autoremove -y \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; better-sqlite3 takes its prebuilt binary for this platform.
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && npm rebuild better-sqlite3 \
 && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY docs ./docs
COPY clients/typescript/openapi.json ./clients/typescript/openapi.json
COPY tsconfig.json README.md ./

ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATABASE_URL=sqlite:/app/data/netdiag.db
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
VOLUME ["/app/data"]
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM drains (requests answered, jobs given back); stop with a grace longer than NETDIAG_SHUTDOWN_GRACE_S.
STOPSIGNAL SIGTERM
# --max-semi-space-size=64 (a 64 MiB young generation): kept for its figure, BENCHMARKS.md, "Speed tricks".
CMD ["node", "--max-semi-space-size=64", "bin/netdiag.js", "serve"]
