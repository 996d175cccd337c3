"""Every URL shown to a person: the registrable domain first, punycode beside Unicode, and
look-alike names warned about from Unicode's own confusables and script data."""

from __future__ import annotations

import pytest

from portico.policy.url_review import review_url


def test_a_plain_https_url_has_its_host_apart_and_no_warning() -> None:
    review = review_url("https://login.example.com:8443/connect?x=1#top")
    assert (review.before_host, review.host, review.after_host) == (
        "https://",
        "login.example.com",
        ":8443/connect?x=1#top",
    )
    assert review.warnings == () and review.openable
    assert review.registrable_domain == "example.com"
    assert review.origin == "https://login.example.com:8443"
    assert review.lines() == (
        "Site: example.com",
        "Host: login.example.com",
        "Address: https://login.example.com:8443/connect?x=1#top",
    )


def test_the_registrable_domain_comes_from_the_public_suffix_list() -> None:
    # co.uk is a public suffix: the name someone registered is evil.co.uk, not co.uk
    review = review_url("https://login.evil.co.uk/a")
    assert review.registrable_domain == "evil.co.uk"
    assert review.lines()[0] == "Site: evil.co.uk"
    # a private suffix of the list: each blog is its own site
    assert review_url("https://someone.blogspot.com/").registrable_domain == (
        "someone.blogspot.com"
    )


def test_an_idn_homograph_with_a_latin_look_alike_letter_is_warned_about() -> None:
    review = review_url("https://ɡithub.com/login/oauth")  # U+0261 LATIN SMALL LETTER SCRIPT G
    assert review.host == "ɡithub.com" and review.ascii_host == "xn--ithub-qmc.com"
    assert review.site == "ɡithub.com (punycode xn--ithub-qmc.com)"
    assert review.origin == "https://xn--ithub-qmc.com"
    (warning,) = review.warnings
    assert "not the plain-letter name" in warning
    assert "U+0261 LATIN SMALL LETTER SCRIPT G" in warning and "'g'" in warning


def test_mixed_scripts_in_one_label_are_warned_about() -> None:
    review = review_url("https://gооgle.com/")  # two Cyrillic о
    assert any("mixes Cyrillic and Latin letters" in w for w in review.warnings)
    assert review.ascii_host.startswith("xn--")


def test_a_whole_script_cyrillic_look_alike_is_warned_about() -> None:
    review = review_url("https://аррӏе.com/")  # every letter Cyrillic
    assert review.site == "аррӏе.com (punycode xn--80ak6aa92e.com)"
    (warning,) = review.warnings
    assert "entirely in Cyrillic letters that look like Latin ones" in warning


@pytest.mark.parametrize(
    ("url", "ascii_host"),
    [
        ("https://münchen.de/", "xn--mnchen-3ya.de"),
        ("https://пример.рф/", "xn--e1afmkfd.xn--p1ai"),  # Cyrillic, but not all look Latin
        ("https://日本語ドメイン.jp/", "xn--eckwd4c7c5976acvb2w6i.jp"),  # Han + Katakana
    ],
)
def test_a_legitimate_idn_shows_both_forms_without_a_look_alike_warning(
    url: str, ascii_host: str
) -> None:
    review = review_url(url)
    assert review.warnings == ()
    assert review.ascii_host == ascii_host
    assert f"(punycode {ascii_host})" in review.lines()[0]


def test_punycode_input_is_shown_in_unicode_beside_its_punycode() -> None:
    review = review_url("https://www.xn--mnchen-3ya.de/x")
    assert review.host == "www.münchen.de" and review.registrable_domain == "münchen.de"
    assert review.lines()[:2] == (
        "Site: münchen.de (punycode xn--mnchen-3ya.de)",
        "Host: www.münchen.de (punycode www.xn--mnchen-3ya.de)",
    )
    assert review.warnings == ()
    hidden = review_url("https://xn--pypal-4ve.com/login")  # "pаypal" with a Cyrillic а
    assert hidden.host == "pаypal.com"
    assert any("mixes Cyrillic and Latin" in w for w in hidden.warnings)
    bogus = review_url("https://xn--zz.com/")
    assert any("not valid punycode" in w for w in bogus.warnings)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("https://203.0.113.9/x", "(203.0.113.9)"),
        ("https://[2001:db8::1]:8443/x", "(2001:db8::1)"),
        ("http://0x7f.1/", "(0x7f.1, which is 127.0.0.1)"),  # what a browser dials
        ("http://2130706433/", "(2130706433, which is 127.0.0.1)"),
    ],
)
def test_ip_literals_are_named_as_addresses(url: str, said: str) -> None:
    review = review_url(url)
    assert review.is_ip and review.registrable_domain == ""
    assert any("bare IP address" in w and said in w for w in review.warnings)
    assert "(an IP address, not a name)" in review.site


def test_a_user_name_before_the_host_is_called_out_and_a_password_never_shown() -> None:
    review = review_url("https://github.com@evil.example/pay")
    assert review.host == "evil.example" and review.registrable_domain == "evil.example"
    assert review.lines()[0] == "Site: evil.example"
    assert review.before_host == "https://github.com@"
    assert any(
        "(github.com) is not the site" in w and "the site is evil.example" in w
        for w in review.warnings
    )
    secret = review_url("https://me:hunter2@host.example/x")
    assert "hunter2" not in " ".join(secret.lines())
    assert secret.shown_url == "https://me:***@host.example/x"


def test_plain_http_and_other_schemes() -> None:
    assert any("plain http" in w for w in review_url("http://example.com/").warnings)
    other = review_url("javascript:alert(1)")
    assert not other.openable and any("not opened" in w for w in other.warnings)
    assert other.origin == "" and other.shown_url == "javascript:alert(1)"
    broken = review_url("https://x:99999/")
    assert not broken.openable and broken.warnings == ("it is not a valid address",)
