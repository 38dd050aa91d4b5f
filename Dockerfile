# One image for api, worker and migrate; docker-compose picks the command.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# the client package (libs/api-client) is an npm workspace: npm ci needs its package.json
COPY libs/api-client/package.json libs/api-client/
RUN npm ci --no-audit --no-fund
COPY . .
# the commit GET /version answers: the context has no .git (docker-compose.yml passes it when given)
ARG PARLEY_COMMIT=
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# jemalloc instead of glibc's malloc: glibc's main arena keeps what a busy worker frees, and its
# RSS grows for hours (docs/operations.md, "A process's memory")
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/* \
  && ln -s "$(find /usr/lib -name libjemalloc.so.2 | head -n 1)" /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
# a 1 GiB old space: V8 lets a heap grow to 4× what survives its last full collection when the
# limit is larger (~4 GiB by default here), 1.6× at 1 GiB (docs/operations.md, "A process's memory")
ENV NODE_OPTIONS=--max-old-space-size=1024
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY prompts ./prompts
USER node
CMD ["node", "dist/apps/api/src/main.js"]
