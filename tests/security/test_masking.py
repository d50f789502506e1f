"""The one masking function (issue 19): which values are secrets (secrets.env, .env, environment
credentials) and in which forms they are found (encoded, short, split across stream chunks)."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings, strategies as st

from a0nb import Agent
from a0nb.files.secrets import Secrets, StreamMasker
from a0nb.testing import answer

KEY = "sk-live-Zq81xWc7Lp0a"


def _agent(nb: Path, **kwargs: object) -> Agent:
    return Agent(nb, model=[answer("ok")], **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                  "GITHUB_TOKEN", "DB_PASSWORD", "MY_SERVICE_SECRET", "HF_TOKEN", "PRIVATE_KEY"])
def test_environment_credentials_are_masked(nb: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, KEY)
    assert KEY not in _agent(nb).mask(f"the value is {KEY}.")


def test_database_url_and_its_password_are_masked(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgres://app:Pa%24%24w0rd-91x@db.internal:5432/prod"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("CACHE_ENDPOINT", "redis://:hunter2-cache@cache:6379/0")  # any URL with a password
    text = _agent(nb).mask(f"url={url} password=Pa$$w0rd-91x cache=hunter2-cache")
    assert "Pa$$w0rd-91x" not in text and "Pa%24%24w0rd" not in text and "hunter2-cache" not in text


def test_api_key_env_names_any_variable(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_CREDS_FOR_LLM", KEY)  # no credential-like name: only api_key_env says so
    agent = _agent(nb, settings={"api_key_env": "ACME_CREDS_FOR_LLM"})
    assert KEY not in agent.mask(KEY)


def test_dotenv_values_are_masked(nb: Path) -> None:
    (nb / ".env").write_text("SERVICE_LOGIN=svc-login-8812\nA0NB_MODEL=scripted:x.yaml\n", encoding="utf-8")
    agent = _agent(nb)
    assert agent.mask("login svc-login-8812") == "login <redacted:SERVICE_LOGIN>"
    assert agent.mask("scripted:x.yaml") == "scripted:x.yaml"  # a0nb's own settings are not secrets


def test_ordinary_environment_is_not_masked(nb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("SSL_KEY_FILE", "/etc/ssl/private/server.pem")
    monkeypatch.setenv("FEATURE_TOKEN_ENABLED", "true")
    text = "region eu-central-1 file /etc/ssl/private/server.pem flag true"
    assert _agent(nb).mask(text) == text


def test_encoded_forms_are_masked() -> None:
    secret = "pw-Kd83!x/q+z"
    masker = Secrets({"DB_PASSWORD": secret})
    raw = secret.encode()
    basic = base64.b64encode(b"admin:" + raw).decode()  # inside a longer blob, at any alignment
    for form in (quote(secret, safe=""), quote_plus(secret), raw.hex(), raw.hex().upper(),
                 base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode(), json.dumps(secret)):
        assert secret not in masker.mask_text(f"x {form} y") and form.strip('"') not in masker.mask_text(f"x {form} y")
    for prefix in ("", "a", "ab", "abc"):
        blob = base64.b64encode(prefix.encode() + raw + b"-tail").decode()
        masked = masker.mask_text(blob)
        assert masked != blob and "§§secret(DB_PASSWORD)" in masked
    assert "§§secret(DB_PASSWORD)" in masker.mask_text(f"Authorization: Basic {basic}")


def test_short_secret_is_masked_as_a_word() -> None:
    masker = Secrets({"PIN": "7z9"})
    assert masker.mask_text("pin 7z9, code x7z9y") == "pin §§secret(PIN), code x7z9y"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab-xyz ", max_size=12), st.text(alphabet="ab-xyz ", max_size=12), st.data())
def test_stream_split_never_shows_an_encoded_secret(before: str, after: str, data: st.DataObject) -> None:
    secret = "ab-Secret-42z"
    form = data.draw(st.sampled_from([secret, quote_plus(secret), secret.encode().hex(),
                                      base64.b64encode(secret.encode()).decode()]))
    text = before + form + after
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=4)))
    masker = StreamMasker(Secrets({"S": secret}))
    pieces = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]
    outputs = [masker.feed(p) for p in pieces] + [masker.flush()]
    for out in outputs:
        assert form not in out and secret not in out
    assert form not in "".join(outputs)


def test_live_snapshot_hides_a_secret_cut_by_the_stream() -> None:
    masker = Secrets({"API_KEY": "sk-abcdef123456"})
    assert masker.mask_live("the key is sk-abcdef12") == "the key is ***"
    assert masker.mask_live("key sk-abcdef123456 ok") == "key §§secret(API_KEY) ok"
