# Build stage: compile TypeScript and the native SQLite binding.
FROM node:22-slim AS build
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime stage: only the compiled code, production dependencies and the example rules.
# A container's loopback is unreachable from outside it, so both listeners bind every interface here:
# webhooks on 8080, the admin API, console and metrics on 8081. Publish 8081 to loopback or a private
# network only, e.g. `-p 8080:8080 -p 127.0.0.1:8081:8081`.
FROM node:22-slim
ENV NODE_ENV=production \
    HOOKRELAY_HOST=0.0.0.0 \
    HOOKRELAY_PORT=8080 \
    HOOKRELAY_ADMIN_HOST=0.0.0.0 \
    HOOKRELAY_ADMIN_PORT=8081 \
    HOOKRELAY_DATA_DIR=/data \
    HOOKRELAY_RULES_DIR=/app/rules
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY rules ./rules
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 8081
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.HOOKRELAY_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The same command `npm start` runs after building.
CMD ["node", "--max-semi-space-size=4", "--initial-old-space-size=40", "dist/cli.js", "serve"]
