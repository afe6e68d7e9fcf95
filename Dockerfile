# syntax=docker/dockerfile:1

# Node.js 24 LTS on Debian 12, pinned by digest so a rebuild gets the same base until the pin is
# moved on purpose (by Dependabot, Renovate or a person: `docker buildx imagetools inspect
# node:24-bookworm-slim` prints the current digest). This is the multi-platform index digest of
# node:24-bookworm-slim for Node 24.19.0, as docker-library/repo-info recorded it.
FROM node:24-bookworm-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df AS node

# Build stage: compile TypeScript with the dev dependencies.
FROM node AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The device SDK, built by the same `npm run build` into sdk/dist.
COPY sdk ./sdk
COPY scripts/build-sdk.ts ./scripts/
# The web console, built by the same `npm run build` into console/dist.
COPY console ./console
COPY scripts/build-console.ts ./scripts/
RUN npm run build

# Production dependencies only.
FROM node AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts

# Final stage: built code, production node_modules and the shipped rules; runs as the non-root `node` user.
# The data job runs from it too: `node dist/cli/data-update.js` (or `npm run data:update`).
FROM node
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data \
    RULES_DIR=/rules \
    DATABASE_URL=sqlite:/var/lib/risk/risk.sqlite \
    DATA_UPDATE_ON_START=true
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/sdk/dist ./sdk/dist
COPY --from=build --chown=root:root /app/sdk/package.json ./sdk/
COPY --from=build --chown=root:root /app/console/dist ./console/dist
COPY --chown=root:root package.json ./
COPY --chown=root:root rules /rules
RUN mkdir -p /data /var/lib/risk && chown node:node /data /var/lib/risk
USER node
EXPOSE 3000
VOLUME ["/data", "/var/lib/risk"]
# No curl in the slim image: Node itself probes readiness.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node as PID 1 receives SIGTERM directly and drains (server.ts); no shell in between.
# A bounded heap: V8 otherwise reserves two to three times the live heap under sustained load;
# within it, the old generation may double between full collections (V8 lets a heap this small
# grow by 1.3 only: a full collection every 2 s under new sign-ups). README "Running in Docker";
# the same flags as `npm start`.
CMD ["node", "--max-old-space-size=224", "--max-semi-space-size=8", "--heap-growing-percent=100", "dist/server.js"]
