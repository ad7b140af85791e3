"""Who is calling: the count of wrong tokens per client, and what a trusted proxy may say about the client."""

from __future__ import annotations

import pytest

from memdir import InvalidArgument
from memdir.faces.auth import Proxies, Throttle, client_key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_client_waits_after_too_many_wrong_tokens_until_the_oldest_leaves_the_window() -> None:
    clock = Clock()
    throttle = Throttle(3, 60.0, clock=clock)
    for _ in range(2):
        throttle.failed("203.0.113.7")
        clock.now += 10
    assert throttle.wait("203.0.113.7") == 0.0  # two of three
    throttle.failed("203.0.113.7")
    assert throttle.wait("203.0.113.7") == 40.0  # the first failure, at 1000, leaves the window at 1060
    assert throttle.wait("203.0.113.8") == 0.0
    clock.now = 1060.0
    assert throttle.wait("203.0.113.7") == 0.0
    throttle.failed("203.0.113.7")  # three within 60 s again: 1010, 1020, 1060
    assert throttle.wait("203.0.113.7") == 10.0


def test_the_throttle_forgets_the_longest_quiet_clients_first() -> None:
    throttle = Throttle(1, 60.0, clock=Clock(), max_clients=2)
    for client in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
        throttle.failed(client)
    assert [throttle.wait(c) > 0 for c in ("192.0.2.1", "192.0.2.2", "192.0.2.3")] == [False, True, True]


def test_one_ipv6_host_counts_as_its_64() -> None:
    assert client_key("2001:db8:1:2::5") == client_key("[2001:db8:1:2:ffff::1]") == "2001:db8:1:2::/64"
    assert client_key("::ffff:192.0.2.1") == "192.0.2.1" and client_key("testclient") == "testclient"


def test_only_a_trusted_proxy_says_who_the_client_is_and_its_scheme() -> None:
    proxies = Proxies(["127.0.0.1", "10.0.0.0/8"])
    xff = {"x-forwarded-for": "6.6.6.6, 203.0.113.7, 10.1.2.3", "x-forwarded-proto": "https"}
    # the client put 6.6.6.6 first; the outer proxy saw 203.0.113.7, the inner one the outer proxy
    assert proxies.forwarded("127.0.0.1", xff) == ("203.0.113.7", "https")
    assert proxies.forwarded("192.0.2.50", xff) == ("192.0.2.50", None)  # not a proxy of ours: its headers are its own
    assert Proxies().forwarded("127.0.0.1", xff) == ("127.0.0.1", None)  # none trusted by default
    forwarded = {"forwarded": 'for=6.6.6.6;proto=http, for="[2001:db8::7]:4711";proto=https'}
    assert proxies.forwarded("10.9.9.9", forwarded) == ("2001:db8::7", "https")
    assert proxies.forwarded("127.0.0.1", {"x-forwarded-proto": "gopher"}) == ("127.0.0.1", None)
    with pytest.raises(InvalidArgument, match="--trusted-proxy 'proxy.local' is not an IP address or network"):
        Proxies(["proxy.local"])
