# Home Assistant add-on image: the multi-arch Home Assistant Python base (Alpine, s6-overlay,
# bashio), named directly; no build.yaml. Data lives in /data, which the Supervisor keeps.
FROM ghcr.io/home-assistant/base-python:3.13-alpine3.22

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1

WORKDIR /opt/memory-curator
COPY pyproject.toml README.md ./
COPY webapp ./webapp
COPY templates ./templates
COPY static ./static
# The anthropic extra too: every provider the Configuration tab offers runs in this image.
RUN pip install --no-cache-dir "./[anthropic]" \
    && rm -rf /opt/memory-curator/build

WORKDIR /data
EXPOSE 8099

LABEL io.hass.type="addon" \
      io.hass.arch="amd64|aarch64" \
      org.opencontainers.image.title="Memory Curator" \
      org.opencontainers.image.description="Curate the long-term memory of a personal AI assistant"

# s6-overlay's /init (the base image's entrypoint) runs this as the main process.
CMD ["memory-curator", "serve", "--host", "0.0.0.0", "--port", "8099"]
