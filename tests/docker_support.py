"""One probe for a Docker engine, shared by every testcontainers (Neo4j) test module."""

from __future__ import annotations

import pytest


def _docker_reason() -> str | None:
    try:
        import docker

        docker.from_env(timeout=5).ping()
    except Exception as exc:  # any failure means: no engine to run Neo4j in
        return f"no Docker engine available for a Neo4j container ({type(exc).__name__})"
    return None


DOCKER_REASON = _docker_reason()  # None when a Docker engine answers
needs_docker = pytest.mark.skipif(DOCKER_REASON is not None, reason=DOCKER_REASON or "")
