# Image of the service for docker-compose.yml. The service runs TypeScript through tsx on the
# Node 24 that the `node` devDependency installs, exactly as `npm start` does on a machine.
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
CMD ["npm", "start"]
