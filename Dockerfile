# partner-sync: multi-stage image. The build stage compiles TypeScript and the native SQLite
# addon; the runtime stage carries only production dependencies and runs as a non-root user.
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
COPY src/spec/schemas ./src/spec/schemas
COPY config ./config
COPY samples ./samples
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
ENTRYPOINT ["node", "/app/bin/partner-sync.js"]
CMD ["--help"]
