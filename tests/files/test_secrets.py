from __future__ import annotations

import json
from collections import OrderedDict, defaultdict, namedtuple
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a0nb.diagnostics import Diagnostics
from a0nb.errors import RepairableError
from a0nb.files.secrets import ALIAS_RE, SecretEntry, Secrets, StreamMasker, parse_dotenv


def parse(text: str) -> dict[str, str]:
    entries, problems = parse_dotenv(text)
    assert problems == []
    return {e.key: e.value for e in entries}


# ---------------------------------------------------------------- dotenv


def test_dotenv_plain_spaces_and_export() -> None:
    assert parse("A=1\nB = two words \nexport C=3\n  export   D =4") == {
        "A": "1", "B": "two words", "C": "3", "D": "4"}


def test_dotenv_quotes() -> None:
    text = 'A="x y # not a comment"\nB=\'a\\nb $X\'\nC="line\\nnext \\"q\\" \\\\ end"\nD=""\nE=\'\''
    assert parse(text) == {"A": "x y # not a comment", "B": "a\\nb $X",
                           "C": 'line\nnext "q" \\ end', "D": "", "E": ""}


def test_dotenv_inline_comments_and_hash_in_value() -> None:
    entries, _ = parse_dotenv("A=abc # the comment\nB=#abc\nC=a#b\nD= # only comment\nE=\"v\" # after quote")
    got = {e.key: (e.value, e.comment) for e in entries}
    assert got == {"A": ("abc", "the comment"), "B": ("#abc", ""), "C": ("a#b", ""),
                   "D": ("", "only comment"), "E": ("v", "after quote")}


def test_dotenv_comments_attach_to_next_key_until_blank_line() -> None:
    entries, _ = parse_dotenv("# file header\n\n# first line\n# second line\nA=1\nB=2\n# orphan\n\nC=3")
    assert [(e.key, e.comment) for e in entries] == [
        ("A", "first line\nsecond line"), ("B", ""), ("C", "")]


def test_dotenv_multiline_quoted_value_and_line_numbers() -> None:
    entries, problems = parse_dotenv('A=1\nPEM="-----BEGIN-----\nabc\n-----END-----"\nB=2')
    assert problems == []
    assert [(e.key, e.line) for e in entries] == [("A", 1), ("PEM", 2), ("B", 5)]
    assert entries[1].value == "-----BEGIN-----\nabc\n-----END-----"


def test_dotenv_bad_lines_report_line_and_never_the_value() -> None:
    text = "just-a-secret-value\n1BAD=x\nmy key=hunter22\nC=\"v\" junk\nB=ok\nA=\"unterminated\nD=fine"
    entries, problems = parse_dotenv(text)
    assert {e.key: e.value for e in entries} == {"B": "ok", "D": "fine"}
    assert [line for line, _ in problems] == [1, 2, 3, 4, 6]
    assert "after the closing quote" in problems[3][1] and "unterminated" in problems[4][1]
    for _, reason in problems:
        assert "hunter22" not in reason and "just-a-secret" not in reason


def test_dotenv_crlf_and_empty() -> None:
    assert parse("A=1\r\nB=2\r\n") == {"A": "1", "B": "2"}
    assert parse_dotenv("") == ([], [])


# ---------------------------------------------------------------- loading


def test_load_merges_files_later_wins_keys_upper_cased(tmp_path: Path) -> None:
    home = tmp_path / "secrets.env"
    home.write_text("# the API\napi_key=home-value\n# mail\nMAIL=mail-pass\n")
    proj = tmp_path / "proj.env"
    proj.write_text("API_KEY=project-value\n")
    diags = Diagnostics()
    secrets = Secrets.load([home, tmp_path / "missing.env", proj], diags)
    assert len(diags) == 0
    assert secrets.resolve("§§secret(api_key)") == "project-value"
    # the project redefines the key without a comment: the earlier comment is kept
    assert secrets.keys() == [SecretEntry("API_KEY", "the API"), SecretEntry("MAIL", "mail")]
    assert sorted(secrets.values()) == ["mail-pass", "project-value"]


def test_load_bad_lines_give_diagnostics_with_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "secrets.env"
    f.write_text("GOOD=value1\nnot a pair\nALSO=value2\n")
    diags = Diagnostics()
    secrets = Secrets.load([f], diags)
    assert [e.key for e in secrets.keys()] == ["GOOD", "ALSO"]
    (d,) = diags.of("secrets")
    assert d.path == str(f) and d.line == 2 and d.severity == "warning"


def test_load_binary_file_is_a_diagnostic(tmp_path: Path) -> None:
    f = tmp_path / "secrets.env"
    f.write_bytes(b"\xff\xfe\x00garbage")
    diags = Diagnostics()
    assert not Secrets.load([f], diags)
    assert diags.of("secrets")[0].path == str(f)


def test_keys_and_repr_never_show_values() -> None:
    secrets = Secrets({"API_KEY": "abcd1234"}, {"api_key": "for the API"})
    assert secrets.keys() == [SecretEntry("API_KEY", "for the API")]
    assert "abcd1234" not in repr(secrets) and "abcd1234" not in str(secrets.keys())
    assert bool(secrets) and not Secrets()


# ---------------------------------------------------------------- resolve / mask (§8.3 item 25)


def test_item_25_resolve_mask_and_unknown_alias() -> None:
    secrets = Secrets.load([], Diagnostics())
    assert not secrets
    secrets = Secrets({"API_KEY": "abcd1234"})
    assert secrets.resolve({"arg": "§§secret(api_key)"}) == {"arg": "abcd1234"}
    assert secrets.mask("token abcd1234") == "token §§secret(API_KEY)"
    with pytest.raises(RepairableError) as err:
        secrets.resolve({"arg": "use §§secret(NOPE)"})
    assert "§§secret(NOPE)" in str(err.value) and "API_KEY" in str(err.value)
    assert "abcd1234" not in str(err.value)


def test_resolve_unknown_alias_without_any_secrets() -> None:
    with pytest.raises(RepairableError, match="no secrets are defined"):
        Secrets().resolve("§§secret(X)")


def test_resolve_nested_and_non_strings_untouched() -> None:
    secrets = Secrets({"A": "alpha-value", "b_2": "beta"})
    args = {"x": ["§§secret(a)", {"y": "pre §§secret(B_2) post"}], "n": 3, "t": ("§§secret(A)",), "z": None}
    assert secrets.resolve(args) == {"x": ["alpha-value", {"y": "pre beta post"}], "n": 3,
                                     "t": ("alpha-value",), "z": None}
    assert secrets.resolve("§§secret(9A) stays") == "§§secret(9A) stays"  # not an alias: starts with a digit


def test_alias_regex() -> None:
    assert ALIAS_RE.findall("§§secret(_x) §§secret(Ab9) §§secret(9a) §secret(A)") == ["_x", "Ab9"]


def test_mask_nested_structures_dict_keys_and_types() -> None:
    secrets = Secrets({"K": "s3cret-val"})
    Pair = namedtuple("Pair", "a b")
    dd: defaultdict[str, list[str]] = defaultdict(list, {"s3cret-val": ["x s3cret-val"]})
    value = {
        "s3cret-val": ["a s3cret-val", ("s3cret-val", 5)],
        "o": OrderedDict(k="s3cret-val"),
        "p": Pair("s3cret-val", None),
        "s": {"s3cret-val"},
        "d": dd,
    }
    masked = secrets.mask(value)
    alias = "§§secret(K)"
    assert masked == {alias: [f"a {alias}", (alias, 5)], "o": OrderedDict(k=alias),
                      "p": Pair(alias, None), "s": {alias}, "d": {alias: [f"x {alias}"]}}
    assert type(masked["o"]) is OrderedDict and type(masked["p"]) is Pair
    assert type(masked[alias][1]) is tuple and isinstance(masked["d"], dict)
    assert "s3cret-val" not in json.dumps(masked, default=list)
    assert value["s3cret-val"] == ["a s3cret-val", ("s3cret-val", 5)]  # input untouched


def test_short_values_are_masked_as_whole_words_only() -> None:
    secrets = Secrets({"SHORT": "abc", "SPACED": " a b ", "EMPTY": "", "OK": "abcd"})
    assert secrets.mask("abc a b abcd") == "§§secret(SHORT) a b §§secret(OK)"
    assert secrets.mask("xabcx abc.") == "xabcx §§secret(SHORT)."  # inside a word it is ordinary text
    assert secrets.resolve("§§secret(short)§§secret(empty)") == "abc"


def test_mask_longest_value_first() -> None:
    secrets = Secrets({"SHORT": "abcd", "LONG": "abcd1234"})
    assert secrets.mask("abcd1234 abcd") == "§§secret(LONG) §§secret(SHORT)"


def test_mask_is_idempotent_even_when_a_value_looks_like_alias_text() -> None:
    secrets = Secrets({"WORD": "secret", "API_KEY": "abcd1234"})
    once = secrets.mask("secret abcd1234")
    assert once == "§§secret(WORD) §§secret(API_KEY)"
    assert secrets.mask(once) == once


def test_mask_json_escaped_multiline_value() -> None:
    pem = "-----BEGIN-----\nMIIabc\"q\"\n-----END-----"
    secrets = Secrets({"PEM": pem})
    dumped = json.dumps({"out": f"key: {pem}"})
    assert pem not in json.loads(secrets.mask_text(dumped))["out"]
    assert json.loads(secrets.mask_text(dumped)) == {"out": "key: §§secret(PEM)"}


def test_mask_values_with_regex_characters() -> None:
    secrets = Secrets({"A": "-abc-", "B": "]xyz", "C": "^q.*q", "D": "\\www", "E": "[e|e"})
    assert secrets.mask("x -abc- ]xyz ^q.*q \\www [e|e ^qzzq") == (
        "x §§secret(A) §§secret(B) §§secret(C) §§secret(D) §§secret(E) ^qzzq")


def test_mask_without_secrets_returns_input() -> None:
    value = {"a": ["b"]}
    assert Secrets().mask(value) == value
    assert Secrets().mask_text("abc") == "abc"


def test_round_trip_mask_then_resolve() -> None:
    secrets = Secrets({"API_KEY": "abcd1234", "DB": "p@ss w0rd!"})
    text = "connect p@ss w0rd! with abcd1234abcd1234"
    masked = secrets.mask(text)
    assert "abcd1234" not in masked and "p@ss" not in masked
    assert secrets.resolve(masked) == text


VALUES = ["abcd1234", "cd12xy", "zzzz", "abab-abab", "1234abcd"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(VALUES), st.text(alphabet="abcdz12 -§(", max_size=6)), max_size=12))
def test_round_trip_property(parts: list[str]) -> None:
    secrets = Secrets({f"K{i}": v for i, v in enumerate(VALUES)})
    text = "".join(parts)
    masked = secrets.mask_text(text)
    for v in VALUES:
        assert v not in masked
    if "§" not in text:  # text with alias-like fragments of its own cannot round-trip
        assert secrets.resolve(masked) == text


# ---------------------------------------------------------------- streams


def run_stream(secrets: Secrets, chunks: list[str]) -> tuple[list[str], str]:
    masker = StreamMasker(secrets)
    outputs = [masker.feed(c) for c in chunks]
    return outputs, masker.flush()


def test_stream_secret_split_at_every_boundary() -> None:
    secrets = Secrets({"API_KEY": "abcd1234"})
    text = "token abcd1234 and more"
    expected = "token §§secret(API_KEY) and more"
    for i in range(len(text) + 1):
        outputs, rest = run_stream(secrets, [text[:i], text[i:]])
        assert "".join(outputs) + rest == expected
        for out in outputs:
            assert "abcd1234" not in out
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            outputs, rest = run_stream(secrets, [text[:i], text[i:j], text[j:]])
            assert "".join(outputs) + rest == expected


def test_stream_character_by_character_and_flush_on_clean_text() -> None:
    secrets = Secrets({"API_KEY": "abcd1234"})
    outputs, rest = run_stream(secrets, list("xabcd1234y"))
    assert "".join(outputs) + rest == "x§§secret(API_KEY)y"
    assert outputs[-2:] == ["§§secret(API_KEY)", "y"] and rest == ""  # emitted once complete


def test_stream_holds_back_possible_start_only() -> None:
    masker = StreamMasker(Secrets({"API_KEY": "abcd1234"}))
    assert masker.feed("hello ab") == "hello "
    assert masker.pending == "ab"
    assert masker.feed("x") == "abx"
    assert masker.feed(" abcd12") == " "
    assert masker.flush() == "***"  # an unfinished secret of >= 3 chars is not shown


def test_stream_short_partial_at_end_is_shown() -> None:
    masker = StreamMasker(Secrets({"API_KEY": "abcd1234"}))
    assert masker.feed("see ab") == "see "
    assert masker.flush() == "ab"


def test_stream_without_secrets_passes_through() -> None:
    masker = StreamMasker(Secrets({"S": "ab"}))  # two characters: never masked
    assert masker.feed("ab") == "ab" and masker.flush() == ""


def test_stream_overlapping_secrets_never_leak() -> None:
    secrets = Secrets({"A": "abcdef", "B": "defg"})
    text = "x abcdefg defg abcdef!"
    for i in range(len(text) + 1):
        outputs, rest = run_stream(secrets, [text[:i], text[i:]])
        joined = "".join(outputs) + rest
        assert "abcdef" not in joined and "defg" not in joined
        assert joined == secrets.mask_text(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(VALUES), st.text(alphabet="abcdz12 -", max_size=5)), max_size=10),
    st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_stream_property_any_chunking(parts: list[str], cuts: list[int]) -> None:
    secrets = Secrets({f"K{i}": v for i, v in enumerate(VALUES)})
    text = "".join(parts) + "!"  # "!" is in no secret: nothing is left unfinished at the end
    points = sorted({min(c, len(text)) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    outputs, rest = run_stream(secrets, chunks)
    joined = "".join(outputs) + rest
    assert joined == secrets.mask_text(text)
    for v in VALUES:
        assert v not in joined
