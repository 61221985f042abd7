# Image of the service for docker-compose.yml. The service runs TypeScript through tsx's loader on
# the image's Node 24, as `npm start` does on a machine. CMD runs node itself, not npm or a shell,
# so `docker stop`'s SIGTERM reaches the service and it shuts down cleanly (src/main.ts).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tspconfig.yaml ./
COPY spec ./spec
COPY generated ./generated
COPY src ./src
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
USER node
CMD ["node", "--import", "tsx", "src/main.ts"]
