"""URL-mode elicitation: the host set apart, look-alike hosts warned about."""

from __future__ import annotations

from portico.policy.url_review import review_url


def test_a_plain_https_url_has_its_host_apart_and_no_warning() -> None:
    review = review_url("https://login.example.com:8443/connect?x=1#top")
    assert (review.before_host, review.host, review.after_host) == (
        "https://",
        "login.example.com",
        ":8443/connect?x=1#top",
    )
    assert review.warnings == () and review.openable


def test_punycode_is_shown_decoded_and_warned_about() -> None:
    review = review_url("https://xn--pypal-4ve.com/login")  # "pаypal" with a Cyrillic а
    assert review.host == "pаypal.com"
    assert any("punycode" in w and "xn--pypal-4ve" in w for w in review.warnings)
    assert any("Cyrillic" in w and "Latin" in w for w in review.warnings)


def test_mixed_scripts_written_in_unicode_are_warned_about() -> None:
    review = review_url("https://gооgle.com/")  # two Cyrillic о
    assert any("mixes letters" in w for w in review.warnings)


def test_a_user_name_before_the_host_is_called_out() -> None:
    review = review_url("https://bank.example.com@evil.example.net/pay")
    assert review.host == "evil.example.net"
    assert review.before_host == "https://bank.example.com@"
    assert any("not the site" in w and "evil.example.net" in w for w in review.warnings)


def test_plain_http_ip_addresses_and_other_schemes() -> None:
    assert any("plain http" in w for w in review_url("http://example.com/").warnings)
    assert any("IP address" in w for w in review_url("https://203.0.113.9/x").warnings)
    other = review_url("javascript:alert(1)")
    assert not other.openable and any("not opened" in w for w in other.warnings)
