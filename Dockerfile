# syntax=docker/dockerfile:1
# The kohami runtime as a container image: `docker build -t kohami-runtime:0.1.0 .` (the tag is package.json's version)
# (docs/operations.md#deploying). Two stages: the first installs the production dependencies with the
# lockfile, the second holds them and the sources, and nothing of npm's cache or the dev tools.

FROM node:24-slim AS deps
WORKDIR /app
# .npmrc keeps onnxruntime-node's install step skipped: its prebuilt CPU binaries ship in the package,
# and the step would download GPU ones the runtime never loads. The workspace's manifest makes npm link
# @kohami/kiosk-client into node_modules (the command-line tools import it).
COPY package.json package-lock.json .npmrc ./
COPY packages/kiosk-client/package.json ./packages/kiosk-client/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-slim
ENV NODE_ENV=production \
    KOHAMI_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    PGLITE_DATA_DIR=/app/.data/pglite
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY machines ./machines
COPY adapters ./adapters
COPY runtime ./runtime
COPY migrations ./migrations
# The kiosk client's sources: the runtime serves them to the /kiosk page, read at start.
COPY packages ./packages
# The embedded database's directory, for a single container without DATABASE_URL (mount a volume there);
# the sources stay root's and read-only to the runtime.
RUN mkdir -p /app/.data && chown node:node /app/.data
# The node image's unprivileged `node` user, by number so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 8080
# Liveness as /health answers it; no curl in slim images, so Node's own fetch. PORT may be overridden.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node itself is PID 1 (exec form, no npm or shell in between), so SIGTERM reaches the runtime and it
# drains (docs/operations.md#shutdown-and-drain).
CMD ["node", "--max-semi-space-size=16", "runtime/main.ts"]
