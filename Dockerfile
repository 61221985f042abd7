# Image of the service for docker-compose.yml, in two stages (issue 10, issue 11):
#
# - build: every dependency (`npm ci`), then `npm run build` compiles src/ to dist/ with tsc;
# - runtime: production dependencies only (`npm ci --omit=dev`: no TypeScript, tsx, test tools or
#   the npm `node` package; the image's own Node 24 runs the service), dist/ and the OpenAPI
#   documents the service reads at start (generated/openapi/*.json, also served under /openapi).
#
# CMD runs node itself as PID 1 (exec form, no npm or shell in between), so `docker stop`'s SIGTERM
# reaches src/main.ts, which finishes open requests and running jobs and stops cleanly. The heap
# flags are those of `npm start` (README, "Start and memory"): an 8 MB young generation and a 1 GB
# old-space limit, under which V8 grows the heap by a smaller factor than under the limit it derives
# from the machine's memory; lower the limit in a container with less than ~1.2 GB. With the embedded PostgreSQL (no
# DATABASE_URL) the service has child processes: run the container with `--init` then, so a
# PostgreSQL process orphaned by a crash is reaped. HEALTHCHECK asks `/readyz` with Node's fetch
# (the slim image has no curl); a `ROLE=worker` container has no HTTP listener, so run it with
# `--no-healthcheck` (compose: `healthcheck: {disable: true}`).
FROM node:24-bookworm-slim AS build
WORKDIR /app
# package.json's allowScripts refuses @scarf/scarf's install script (usage analytics); an npm that
# does not read allowScripts runs it, and this tells it to send nothing.
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.generated.json ./
COPY generated ./generated
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY generated/openapi ./generated/openapi
# DATA_DIR of the embedded PostgreSQL and the generated secrets key, writable by the service's user.
RUN mkdir -p /app/.data && chown node:node /app/.data
ENV HOST=0.0.0.0 PORT=8080 DATA_DIR=/app/.data
EXPOSE 8080
USER node
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--max-semi-space-size=8", "--max-old-space-size=1024", "dist/main.js"]
