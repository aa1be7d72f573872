# partner-sync: multi-stage image. The build stage compiles TypeScript and the native SQLite
# addon; the runtime stage carries only production dependencies and runs as a non-root user.
# Default command: the worker daemon, with /metrics and /healthz on port 9464.
#
#   docker build -t partner-sync .
#   docker run --rm -e STORE_URL=postgres://... -v "$PWD/config:/app/config:ro" partner-sync
#   docker run --rm ... partner-sync status --check        # any other command
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json ./
COPY src ./src
COPY connectors ./connectors
COPY jobs ./jobs
COPY scripts ./scripts
COPY bench ./bench
COPY test ./test
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# JSON Schemas are read at run time from src/ (the spec's record schemas, the definition schema,
# and any other *.schema.json beside the code): the source folder comes along, it is small.
COPY --from=build /app/src ./src
COPY config ./config
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 9464
# Docker stops with SIGTERM, then SIGKILL after its grace period (10 s unless `docker stop -t` or
# compose's stop_grace_period says more): keep --stop-timeout below it.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/partner-sync.js"]
CMD ["worker", "--metrics-port", "9464", "--metrics-host", "0.0.0.0", "--stop-timeout", "8"]
