import socket

import pytest

from fake_namenode import FakeNamenode


@pytest.fixture
def namenode():
    fake = FakeNamenode().start()
    yield fake
    fake.stop()


def _dead_url():
    """A URL where nothing listens: the port stays bound (so no one else takes it) but never listens,
    which makes connections to it fail with 'connection refused'."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    return holder, f"http://127.0.0.1:{holder.getsockname()[1]}"


@pytest.fixture
def dead_url():
    holder, url = _dead_url()
    yield url
    holder.close()


@pytest.fixture
def other_dead_url():
    holder, url = _dead_url()
    yield url
    holder.close()
