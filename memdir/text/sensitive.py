"""Find what must not leak into, or be obeyed from, a memory folder: secrets, personal data, injected orders.

A memory folder is committed to git and loaded into every session, so three things matter:
credentials (`find_secrets`, and `redact` to strip them before a memory is written), personal
data (`find_pii`: e-mail addresses and phone numbers), and text that tries to give the agent
orders (`find_instructions`) or to break out of the block a memory is given to it in
(`find_prompt_tags`: `</memory><system>`).
Every detector is a pure function over a string that returns exact spans; `Hit.masked` never
shows more of a secret than the public prefix that names its kind.

The patterns are our own, stdlib only. detect-secrets (Yelp) was evaluated and not adopted: its
last release is 1.5.0 from May 2024, it has no Anthropic key plugin, it reports a line number
and the raw value rather than a span, it takes ~150 ms to import and pulls in `requests`, and
its keyword/entropy plugins are tuned for source code rather than prose. gitleaks and trufflehog
are Go binaries. docs/secrets.md has the details and the rules for each kind.

Speed: `re` is only fast while it looks for a pattern's first character; alternatives that start
with common letters, `\\b` or case-insensitive text cost up to a microsecond per character. So
each detector first runs one *anchor* pattern whose alternatives all start with a literal that is
rare in prose (`-`, `_`, `:`, `@`, a digit, the rarest letter of a keyword), checked in C by
lookbehinds, and matches precisely only where an anchor was found: all three take ~0.4 s for
10,000 memories of 1 KB. From an anchor a detector reads at most a bounded window (`_LONGEST_*`),
so a text built to make every anchor read to its end (48 KB of `token=`) costs linear time too.

Over 500 lines: one catalogue of shapes (secrets, personal data, instructions) tested as a whole
against gitleaks' examples.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from memdir.text.lazyre import LazyPattern

__all__ = [
    "Hit",
    "find_instructions",
    "find_pii",
    "find_prompt_tags",
    "find_secrets",
    "mask",
    "mask_secrets",
    "path_secrets",
    "redact",
]


@dataclass(frozen=True)
class Hit:
    """One finding: `text[start:end]` is the sensitive value (for `KEY=value`, the value only)."""

    kind: str
    start: int
    end: int
    masked: str
    label: str


def mask(value: str, keep: int = 4) -> str:
    """`value` made safe to print: its first `keep` characters (at most half of it) and its length."""
    keep = max(0, min(keep, len(value) // 2))
    return f"{value[:keep]}…({len(value)} chars)"


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


# --- secrets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    """A credential recognisable by its own shape, wherever it appears."""

    kind: str
    label: str
    pattern: str
    public: str  # the leading part that only names the kind; `masked` shows this much


_TOKENS = (
    # Keys (sk-ant-api03-…), admin keys and OAuth tokens (sk-ant-oat01-…); the tag is public.
    _Token("anthropic-api-key", "Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{32,}", r"sk-ant-(?:[a-z]+\d*-)?"),
    # Before OpenAI's: both start `sk-`. 64 hex digits after a version tag.
    _Token("openrouter-api-key", "OpenRouter API key", r"sk-or-v1-[a-f0-9]{64}", r"sk-or-v1-"),
    # Legacy keys are sk- and 48 alphanumerics; project/service/admin keys carry a tag. Several
    # other providers (DeepSeek, Moonshot, ...) issue the same shape, hence "OpenAI-style".
    _Token(
        "openai-api-key",
        "OpenAI-style API key",
        r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{32,})",
        r"sk-(?:(?:proj|svcacct|admin)-)?",
    ),
    # AI providers whose keys carry their own prefix. gitleaks' rules ask for 80 (xAI), 48 (Groq)
    # and 48 (Perplexity) alphanumerics; 40 also catches a truncated paste.
    _Token("xai-api-key", "xAI API key", r"xai-[A-Za-z0-9]{40,}", r"xai-"),
    _Token("groq-api-key", "Groq API key", r"gsk_[A-Za-z0-9]{40,}", r"gsk_"),
    _Token("perplexity-api-key", "Perplexity API key", r"pplx-[A-Za-z0-9]{40,}", r"pplx-"),
    _Token("langsmith-api-key", "LangSmith API key", r"lsv2_(?:pt|sk)_[a-z0-9]{32}_[a-z0-9]{10}", r"lsv2_[a-z]{2}_"),
    _Token("replicate-api-token", "Replicate API token", r"r8_[A-Za-z0-9]{37}(?![A-Za-z0-9])", r"r8_"),
    # Header and payload are base64url JSON objects, so `eyJ` (`{"`) and `ey` (`{`); a signature
    # makes it a credential. An unsigned or header-only token is not reported.
    _Token(
        "jwt",
        "JSON Web Token",
        r"eyJ[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}={0,2}",
        r"eyJ",
    ),
    _Token(
        "aws-access-key-id", "AWS access key ID", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])", r"A[A-Z]{3}"
    ),
    _Token("github-token", "GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,251}", r"gh[pousr]_"),
    _Token("github-token", "GitHub fine-grained token", r"github_pat_[A-Za-z0-9_]{50,240}", r"github_pat_"),
    # Personal, deploy, runner, pipeline-trigger, feed, mail, agent, OAuth-app, SCIM, feature-flag and
    # CI-job tokens (GitLab's token-prefix table); a routable token ends `.` + 9; then the old runner
    # registration tokens.
    _Token(
        "gitlab-token",
        "GitLab token",
        r"gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|soat|ffct|cbt)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9]{9}(?![A-Za-z0-9]))?"
        r"|GR1348941[A-Za-z0-9_-]{20}",
        r"gl[a-z]+-|GR1348941",
    ),
    # Bot/user/legacy tokens: numeric ids, then a part with at least one letter (so
    # `xoxp-1234-…-####` and `xoxb-12345-abcd234` are not tokens); configuration tokens; app tokens.
    _Token(
        "slack-token",
        "Slack token",
        r"xox[abeoprs]-(?:\d-)?\d{6,14}-(?:\d+-)*(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{10,}"
        r"|xox[bep]-\d-[A-Za-z0-9]{100,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}",
        r"xox[a-z]-|xapp-",
    ),
    _Token(
        "slack-webhook",
        "Slack webhook URL",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}",
        r"https?://hooks\.slack\.com/[a-z]+/",
    ),
    _Token("google-api-key", "Google API key", r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])", r"AIza"),
    _Token("google-oauth-secret", "Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{28}", r"GOCSPX-"),
    _Token("google-oauth-token", "Google OAuth access token", r"ya29\.[A-Za-z0-9_-]{30,}", r"ya29\."),
    _Token(
        "stripe-key",
        "Stripe secret",
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{32,}",
        r"[sr]k_[a-z]+_|whsec_",
    ),
    # Exactly 34 letters after `hf_`: a longer run is an identifier (`hf_requiredCharacteristicTypes…`).
    _Token("huggingface-token", "Hugging Face token", r"hf_[A-Za-z0-9]{34}(?![A-Za-z0-9])", r"hf_"),
    _Token("npm-token", "npm access token", r"npm_[A-Za-z0-9]{36}", r"npm_"),
    _Token("pypi-token", "PyPI upload token", r"pypi-AgE[A-Za-z0-9_-]{50,}", r"pypi-"),
    _Token("digitalocean-token", "DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}", r"do[opr]_v1_"),
    _Token("shopify-token", "Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", r"shp[a-z]{2}_"),
    _Token("linear-api-key", "Linear API key", r"lin_api_[A-Za-z0-9]{40}", r"lin_api_"),
    # `ntn_` for newer integrations; older ones have `secret_` and 43 alphanumerics.
    _Token(
        "notion-token",
        "Notion token",
        r"ntn_\d{11}[A-Za-z0-9]{35}(?![A-Za-z0-9])|secret_[A-Za-z0-9]{43}(?![A-Za-z0-9])",
        r"ntn_|secret_",
    ),
    _Token("doppler-token", "Doppler token", r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}", r"dp\.[a-z]+\."),
    _Token(
        "sendgrid-api-key", "SendGrid API key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", r"SG\."
    ),
    _Token("twilio-api-key", "Twilio API key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", r"SK"),
    # Service-account and cloud tokens, and the older API keys: base64 of `{"k":"`, no dots.
    _Token(
        "grafana-token",
        "Grafana token",
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,3}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3}",
        r"gl(?:sa|c)_|eyJrIjoi",
    ),
)
_TOKEN_SOURCE = "|".join(f"(?P<t{i}>{t.pattern})" for i, t in enumerate(_TOKENS))


# Every token shape in one pattern. Compiled on first use, since only an anchor's hit needs it:
# `memdir index` masks each entry it writes, and most runs meet no anchor at all.
_TOKEN_RE = LazyPattern(_TOKEN_SOURCE)
# The same shapes for a memory's name, whose `-` and `_` part words: a key that a `-` follows ends
# there (`AIza…-prod`), where in prose a Google or SendGrid key, which holds `-` and `_`, must not
# run on into a longer word.
_NAME_TOKEN_RE = LazyPattern(_TOKEN_SOURCE.replace("(?![A-Za-z0-9_-])", "(?![A-Za-z0-9])"))


@functools.cache
def _token_public(i: int) -> re.Pattern[str]:
    return re.compile(_TOKENS[i].public)


@functools.cache
def _token_pattern(i: int) -> re.Pattern[str]:
    return re.compile(_TOKENS[i].pattern)


# How far a detector reads from one anchor. Without a bound, an anchor's pattern ran to the end of
# a long run of key characters, and a run of `token=token=…` (or of `/glc_…`) made every anchor in
# it do so: quadratic, 40 s for 48 KB. With one, a scan is linear in its text however it is built.
# No credential memdir knows is longer (an Anthropic key is 108 characters, a GitHub token 40 to 93,
# a PyPI token some 200, a JWT rarely 4,000, and most web servers take no header over 8 KB). A
# value that reaches its bound is judged on what lies inside it and, when that is a secret,
# redacted to the end of its run, so a key with characters glued on is still taken out whole.
_LONGEST_TOKEN = 8192  # a token with a prefix of its own, or a bearer token
_LONGEST_VALUE = 256  # the value of `KEY=value`, judged on at most this much
_LONGEST_PEM = 16_384  # a PEM block, BEGIN to END (an 8,192-bit RSA key is some 6,500 characters)
_LONGEST_DOMAIN = 255  # an e-mail address's domain (a DNS name is at most 253 characters)


# The words that make a key secret when they end it: `DB_PASSWORD=`, `apiKey:`, `"client_secret":`,
# `SECRET_KEY_BASE=` (Rails). `tokens:`, `keyboard=` or `KEY_PATH=` never qualify.
_KEY_WORDS = ("key", "secret", "token", "password", "passwd", "pwd", "passphrase", "key_base", "key-base")
_FILLER = r"[\"'*\] \t]"  # between key and separator: "key": , **Password**: , key =


def _key_before_separator() -> str:
    """Lookbehinds for the end of a key word before `:`/`=`, one per filler length (a lookbehind has a
    fixed width). Three letters rule out almost every other `:`; _env_hit checks the whole word."""
    endings = "|".join(sorted({re.escape(w[-3:]) for w in _KEY_WORDS}))
    return "|".join(f"(?<=(?i:{endings}){_FILLER}{{{n}}}[:=])" for n in range(3))


# Where a secret may be: each pattern starts with its own character, rare in prose, and `re` scans
# for that character in C (a pattern opening with one literal is searched like `str.find`; one
# opening with a class of the ten, as a single pattern did, is tried at every offset, at some 20 ns
# a character). Token prefixes are anchored on their punctuation (or on the 9 of `ya29.`, the G of
# `SG.`, the J of `eyJ`, the K of `SK`), one lookbehind per prefix width; find_secrets goes back to
# the start of the token.
_SECRET_ANCHORS = tuple(
    re.compile(source)
    for source in (
        # Every prefix ends in a letter (or a digit) and the separator: one test of the character
        # before spares the lookbehinds the dashes of `---` and ` - ` and most underscores.
        r"-(?:(?P<pem>----BEGIN )|(?<=[A-Za-z]-)(?:(?<=sk-)|(?<=xai-)|(?<=pypi-|xox[abeoprs]-|xapp-|pplx-)"
        r"|(?<=GOCSPX-)|(?<=gl[a-z]{2}-)|(?<=gl[a-z]{3}-)|(?<=gl[a-z]{4}-)|(?<=gl[a-z]{5}-)))",
        r"_(?<=[a-z0-9]_)(?:(?<=[sr]k_|hf_|r8_)|(?<=gh[pousr]_|npm_|gsk_|glc_|ntn_|lin_|do[opr]_)|(?<=lsv2_|glsa_)"
        r"|(?<=shp[a-z]{2}_|whsec_)|(?<=github_|secret_))",
        r"\.(?<=dp\.)",
        r"9(?<=ya29)\.",
        r"A(?:KIA|SIA|BIA|CCA|Iza)",
        r"G(?:(?<=SG)\.|R1348941)",
        r"J(?<=eyJ)",
        r"K(?<=SK)[0-9a-fA-F]",
        # `://`: credentials in a URL, or a Slack webhook; `: Bearer`: an Authorization header.
        rf":(?:(?P<url>//)|[ \t\"']*(?P<bearer>(?i:bearer)[ \t]+)|{_key_before_separator()})",
        rf"=(?:{_key_before_separator()})",
    )
)

_ANCHOR_FIRST = tuple(anchor.pattern.removeprefix("\\")[0] for anchor in _SECRET_ANCHORS)


def _anchors(text: str) -> list[re.Match[str]]:
    """The anchors in `text`, as `re.finditer` of the patterns joined in one would find them: left
    to right, none starting inside the one before. No two patterns start with the same character,
    so at any offset at most one of them matches, and its match is the joined pattern's."""
    found: list[re.Match[str]] = []
    for first, pattern in zip(_ANCHOR_FIRST, _SECRET_ANCHORS, strict=True):
        if first not in text:
            continue  # `in` stops at the first one or skips in C: a name or a description holds few
        m = pattern.search(text)
        while m is not None:  # every offset, overlapping ones too: the walk below decides
            found.append(m)
            m = pattern.search(text, m.start() + 1)
    found.sort(key=lambda m: m.start())
    kept: list[re.Match[str]] = []
    for m in found:
        if not kept or m.start() >= kept[-1].end():  # an anchor match is never empty
            kept.append(m)
    return kept


# From here on, patterns compile on their first use (text/lazyre.py): a hook masking text in which
# no anchor is found needs none of them, nor the personal-data ones below.
_PEM_BEGIN = LazyPattern(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = LazyPattern(r"-----END [A-Z0-9 ]*-----")
_PEM_BODY = LazyPattern(r"(?:[ \t]*\r?\n?[ \t]*[A-Za-z0-9+/=]{16,})+")
_B64_RUN = LazyPattern(r"[A-Za-z0-9+/=]{16,}")
_URL_CREDENTIALS = LazyPattern(
    r"://(?P<user>[^\s:/?#@\"'<>\[\]`]{0,64}):(?P<pw>[^\s/?#@\"'<>\[\]`]{1,128})@[A-Za-z0-9\[]"
)
_BEARER_VALUE = LazyPattern(r"[A-Za-z0-9._~+/-]{16,}=*")
_KEY_BEFORE = LazyPattern(rf"(?i:{'|'.join(map(re.escape, _KEY_WORDS))}){_FILLER}{{0,2}}\Z")
_ENV_VALUE = LazyPattern(r"[=:][ \t*]*[\"'`]?([^\s\"'`,;:<>(){}\[\]|]+)")
_AWS_SECRET_LABEL = LazyPattern(r"(?i:aws.{0,20}secret|secret.?access.?key)[^\n]{0,12}\Z")
_AWS_SECRET_VALUE = LazyPattern(r"[A-Za-z0-9/+]{40}")
_PREV_WORD = LazyPattern(r"([A-Z]?[a-z0-9]+|[A-Z0-9]+)[ _.-]?\Z")
_DOTTED_NAME = LazyPattern(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_LETTER_DIGIT = LazyPattern(r"[A-Za-z][0-9]|[0-9][A-Za-z]")

# Markers of a placeholder or a reference rather than a value. Lower-case substrings.
_PLACEHOLDER_PARTS = (
    "xxx", "your", "example", "placeholder", "changeme", "change_me", "change-me", "redacted", "dummy",
    "sample", "fake", "replace", "insert", "todo", "fixme", "<", ">", "${", "{{", "$(", "...", "…", "***",
    # A counting sequence, and the signature of jwt.io's example token, which tutorials print everywhere.
    "0123456789", "sflkxwrjsmekkf2qt4fwpmejf36pok6yjv_adqssw5c",
)  # fmt: skip
_STOCK_LOGINS = _words("password pass passwd pwd secret postgres root admin guest user username changeme test")
# A word before `key`/`token` that makes the pair harmless: `PUBLIC_KEY`, `sortKey`, `next_token`.
_NOT_SECRET_BEFORE = _words(
    "public primary foreign sort partition cache idempotency composite unique lookup translation i18n hot "
    "shortcut row hash range routing shard group dedup dedupe map dict object next page continuation "
    "cursor sync pagination max min num input output total prompt completion context csrf ssh gpg"
)


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character: random tokens score ~4-6, words and slugs ~2.5-3.5."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def _is_placeholder(value: str) -> bool:
    low = value.lower()
    return len(set(low)) <= 2 or any(p in low for p in _PLACEHOLDER_PARTS)


def _looks_random(body: str) -> bool:
    """Does the variable part of a token look generated? Rules out `sk-ant-api03-xxxx…` and the like."""
    return not _is_placeholder(body) and _entropy(body) >= 3.0


def _looks_like_secret(value: str) -> bool:
    """Is a value with no recognisable prefix likely a real credential rather than prose, a name or a path?"""
    if len(value) < 8 or value[0] in "$%/~.@&#" or "://" in value:
        return False
    # Identifiers, model names, dates and versions (`claude-sonnet-4-5-20250929`, `v1.2.3`) never
    # have a letter next to a digit; random strings of this length almost always do.
    if not _LETTER_DIGIT.search(value) or _is_placeholder(value):
        return False
    if len(value) >= 16:
        return _entropy(value) >= 3.0
    # Short values pass only as password-like: three of lower, upper, digit, other symbol.
    classes = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() and c not in "-_." for c in value),
    )
    return sum(classes) >= 3


def _word_start(text: str, pos: int, limit: int = 12, *, name: bool = False) -> int:
    """Where the run of ASCII letters, digits and `_` (not `_` in a `name`) that ends at `pos`
    begins (at most `limit` back)."""
    joins = "" if name else "_"
    start = pos
    while (
        start > 0
        and pos - start < limit
        and text[start - 1].isascii()
        and (text[start - 1].isalnum() or text[start - 1] in joins)
    ):
        start -= 1
    return start


def _glued(text: str, start: int, *, name: bool = False) -> bool:
    """Whether what starts at `start` is glued to a longer word, and so no token: `task-…`,
    `MYAKIA…`, `my_hf_…`. In a memory's kebab- or snake-case `name`, `-` and `_` part words as
    spaces do, so `prod-key-sk-ant-…` holds a key."""
    before = text[start - 1] if start > 0 else " "
    return before.isalnum() or (not name and before in "_-")


def _token_hit(text: str, m: re.Match[str], *, name: bool = False) -> Hit | None:
    """A hit for a match of _TOKEN_RE, if it is one: not glued to a longer word, not a placeholder."""
    i = int(str(m.lastgroup)[1:])
    start, end = m.span()
    if _glued(text, start, name=name):
        return None
    value = text[start:end]
    prefix = _token_public(i).match(value)
    keep = prefix.end() if prefix else 0
    if not _looks_random(value[keep:]):
        return None
    return Hit(_TOKENS[i].kind, start, end, mask(value, keep), _TOKENS[i].label)


def _extended(hit: Hit, end: int, text: str) -> Hit:
    """`hit` reaching to `end`: a value cut by its window runs on, and is a secret to its end."""
    keep = len(hit.masked) - len(f"…({hit.end - hit.start} chars)")  # the public prefix it shows
    return Hit(hit.kind, hit.start, end, mask(text[hit.start : end], keep), hit.label)


def _token_at(text: str, start: int, *, name: bool = False) -> Hit | None:
    """The token that starts at `start`, if one does (a bounded match: see _LONGEST_TOKEN)."""
    if _glued(text, start, name=name):  # before any pattern runs: most anchors in a long run are glued
        return None
    window = start + _LONGEST_TOKEN
    m = (_NAME_TOKEN_RE if name else _TOKEN_RE).match(text, start, window)
    hit = _token_hit(text, m, name=name) if m is not None else None
    if hit is not None and m is not None and m.end() == window:
        whole = _token_pattern(int(str(m.lastgroup)[1:])).match(text, start)
        hit = _extended(hit, whole.end() if whole is not None else m.end(), text)
    return hit


def _classify(text: str, start: int, end: int, kind: str, label: str) -> Hit | None:
    """A hit for a value claimed by a key word, URL or header: a known token inside it is judged as
    that token (so `sk-ant-api03-xxxx…` stays a placeholder), anything else is reported as `kind`."""
    m = _TOKEN_RE.search(text, start, end)
    if m is not None:
        return _token_hit(text, m)
    return Hit(kind, start, end, mask(text[start:end], 0), label)


def _pem_hit(text: str, start: int) -> Hit | None:
    """The whole block from BEGIN to END; a BEGIN line with no key material after it is documentation."""
    begin = _PEM_BEGIN.match(text, start, start + 128)
    if begin is None:
        return None
    # The block ends at its END line, within _LONGEST_PEM and before the next BEGIN line.
    limit = min(len(text), begin.end() + _LONGEST_PEM)
    next_begin = text.find("-----BEGIN ", begin.end(), limit)
    limit = limit if next_begin < 0 else next_begin
    end_m = _PEM_END.search(text, begin.end(), limit)
    if end_m is not None:
        end = end_m.end()
        body = text[begin.end() : end_m.start()]
    else:  # cut off: the block runs as far as the base64 does
        body_m = _PEM_BODY.match(text, begin.end(), limit)
        end = body_m.end() if body_m else begin.end()
        body = text[begin.end() : end]
    # Entropy only, not _looks_random: a long random body often holds `xxx` or `todo` by chance.
    runs = "".join(_B64_RUN.findall(body))
    if len(runs) < 64 or _entropy(runs) < 3.0:  # `XXXX…`: a placeholder key
        return None
    return Hit("private-key", start, end, mask(text[start:end], len(begin.group())), "Private key block")


def _url_hit(text: str, colon: int) -> Hit | None:
    scheme_start = _word_start(text, colon, 30)
    if colon - scheme_start < 2:
        return None
    if (hit := _token_at(text, scheme_start)) is not None:  # a Slack webhook is a secret as a whole
        return hit
    if (m := _URL_CREDENTIALS.match(text, colon, colon + 256)) is None:
        return None
    user, pw = m.group("user"), unquote(m.group("pw"))
    # Real passwords are not words a tutorial would pick (`user:pass@`, `postgres:postgres@`,
    # `foo:bar@`), nor prose (`a%20secret`), nor a variable to be filled in.
    if len(pw) < 6 or pw == user or pw.lower() in _STOCK_LOGINS or _is_placeholder(pw):
        return None
    if pw[0] in "$%{" or any(c.isspace() for c in pw):
        return None
    return _classify(text, m.start("pw"), m.end("pw"), "url-credentials", "Password in a URL")


def _bearer_hit(text: str, at: int) -> Hit | None:
    window = at + _LONGEST_TOKEN
    m = _BEARER_VALUE.match(text, at, window)
    if m is None or not (_TOKEN_RE.match(m.group()) or _looks_like_secret(m.group())):
        return None
    hit = _classify(text, m.start(), m.end(), "bearer-token", "Bearer token")
    if hit is not None and m.end() == window and (whole := _BEARER_VALUE.match(text, at)) is not None:
        hit = _extended(hit, whole.end(), text)
    return hit


def _env_hit(text: str, sep: int) -> Hit | None:
    window = sep + _LONGEST_VALUE
    value_m = _ENV_VALUE.match(text, sep, window)
    if value_m is None or len(value_m.group(1)) < 8:  # too short for any secret: the common case
        return None
    hit = _env_value_hit(text, value_m)
    cut = value_m.end(1) == window
    if hit is not None and hit.kind == "env-assignment" and cut and (whole := _ENV_VALUE.match(text, sep)):
        hit = _extended(hit, sep + len(whole.group().rstrip(".")), text)
    return hit


def _env_value_hit(text: str, value_m: re.Match[str]) -> Hit | None:
    """The secret in `value_m` (_ENV_VALUE's match at a `=` or `:` anchor), if the key before it
    names one and the value looks like a credential."""
    sep = value_m.start()
    key_m = _KEY_BEFORE.search(text, max(0, sep - 16), sep)
    if key_m is None:
        return None
    start, end = value_m.span(1)
    value = value_m.group(1).rstrip(".")  # a sentence's full stop is not part of the value
    end = start + len(value)
    if _TOKEN_RE.match(value):  # `TOKEN=ghp_…`: judged as the token it is
        return _token_at(text, start)
    key_start = key_m.start()
    before = text[key_start - 1] if key_start else ""
    # The key word must start a word or a camelCase part (`apiKey`, and `APIKEY`), not `monkey`.
    camel = text[key_start].isupper() and before.islower()
    if before.isalpha() and not camel and text[max(0, key_start - 3) : key_start].lower() != "api":
        return None
    prev = _PREV_WORD.search(text, max(0, key_start - 32), key_start)
    if prev is not None and prev.group(1).lower() in _NOT_SECRET_BEFORE:
        return None
    if _AWS_SECRET_VALUE.fullmatch(value) and _AWS_SECRET_LABEL.search(text, max(0, start - 60), start):
        if _is_placeholder(value):
            return None
        return Hit("aws-secret-access-key", start, end, mask(value, 0), "AWS secret access key")
    # `key = base64.b64encode(...)`, `KEY = win32api.RegEnumKey`: code, not a value.
    if text[end : end + 1] in ("(", "[") or (len(value) < 40 and _DOTTED_NAME.fullmatch(value)):
        return None
    if not _looks_like_secret(value):
        return None
    return Hit("env-assignment", start, end, mask(value, 0), "Secret in a key=value assignment")


def find_secrets(text: str, *, name: bool = False) -> list[Hit]:
    """Credentials in `text`: API keys and tokens, private keys, URL passwords, secret assignments.
    With `name`, `text` is a memory's name, whose `-` and `_` part words: `prod-key-sk-ant-…`."""
    hits: list[Hit] = []
    done = 0  # end of the last hit: an anchor inside it (a token in `KEY=<token>`) is already judged
    for a in _anchors(text):
        at = a.start()
        if at < done:
            continue
        hit: Hit | None
        if a.lastgroup == "pem":
            hit = _pem_hit(text, at)
        elif a.lastgroup == "url":
            hit = _url_hit(text, at)
        elif a.lastgroup == "bearer":
            hit = _bearer_hit(text, a.end())
        elif text[at] in ":=":
            hit = _env_hit(text, at)
        else:
            hit = _token_at(text, _word_start(text, at, name=name), name=name)
        if hit is not None:
            hits.append(hit)
            done = hit.end
    return hits


def find_placeholder_keys(text: str, *, name: bool = False) -> list[str]:
    """Values shaped like a known key or token whose variable part is a placeholder
    (`sk-ant-api03-AAAA…`), masked for display: find_secrets keeps them as written, and someone
    testing redaction should be told so rather than left to think a key got through."""
    found = []
    done = 0  # a token's own anchors (the `-` of `sk-ant-`) are inside it
    for a in _anchors(text):
        at = a.start()
        if at < done or a.lastgroup in ("pem", "bearer") or (a.lastgroup is None and text[at] in ":="):
            continue  # a PEM block, a header, a key word: no token shape starts there
        start = _word_start(text, at, 30 if a.lastgroup == "url" else 12, name=name)  # a Slack webhook: its scheme
        if _glued(text, start, name=name):
            continue
        m = (_NAME_TOKEN_RE if name else _TOKEN_RE).match(text, start, start + _LONGEST_TOKEN)
        if m is None:
            continue
        done = m.end()
        prefix = _token_public(int(str(m.lastgroup)[1:])).match(m.group())
        keep = prefix.end() if prefix else 0
        if not _looks_random(m.group()[keep:]):
            found.append(mask(m.group(), keep + 4))
    return found


def _replaced(text: str, hits: list[Hit], replacement: Callable[[Hit], str]) -> str:
    parts: list[str] = []
    last = 0
    for hit in hits:  # one join, not a copy of the text per hit
        parts += [text[last : hit.start], replacement(hit)]
        last = hit.end
    parts.append(text[last:])
    return "".join(parts)


def path_secrets(path: str) -> list[Hit]:
    """Credentials in a file's path: each part of it read as a memory's name is, with `-` and `_`
    parting words as spaces and `/` do (`feedback_gh_ghp_…md`, `team-sk-ant-…/x.md`). The one test of
    "this path holds a secret": MEMORY.md, MCP's resource list and lint S009 go by it, and every
    masked output reads the memory paths in it so (mask_secrets)."""
    return find_secrets(path, name=True)


def mask_secrets(text: str) -> str:
    """`text` with every secret in it replaced by its masked form (`sk-ant-api03-…(108 chars)`): for
    messages that quote a value a person wrote, such as a lint finding or an error. A word that ends
    in `.md` is a memory's path, and is read as path_secrets reads one."""
    hits = find_secrets(text)
    if _PATH_END in text:
        hits = _with_path_hits(text, hits)
    return _replaced(text, hits, lambda hit: hit.masked)


_PATH_END = ".md"
_PATH_STOP = LazyPattern(r"[\s\"'`<>()\[\]{}|,;]")  # what ends a path written in running text


def _with_path_hits(text: str, hits: list[Hit]) -> list[Hit]:
    """`hits` and the secrets of the memory paths in `text`, in order: what path_secrets finds that
    lies in a word ending in `.md`. Read in one scan of the text, as a name, then kept where a path
    holds it: a key glued into prose by `_` stays prose."""
    extra: list[Hit] = []
    i = 0
    for hit in path_secrets(text):  # in order, as `hits` are: one walk finds the overlaps
        while i < len(hits) and hits[i].end <= hit.start:
            i += 1
        if (i == len(hits) or hits[i].start >= hit.end) and _in_path(text, hit):
            extra.append(hit)
    return sorted([*hits, *extra], key=lambda h: h.start) if extra else hits


def _in_path(text: str, hit: Hit) -> bool:
    """Whether the word `hit` is in ends in `.md` after it (a memory's file or folder name)."""
    stop = _PATH_STOP.search(text, hit.end)
    return text.find(_PATH_END, hit.end, stop.start() if stop else len(text)) >= 0


def redact(text: str, *, name: bool = False) -> str:
    """`text` with every secret value replaced by `[REDACTED:<kind>]`; keys, labels and the rest stay.
    `name` as for find_secrets."""
    return _replaced(text, find_secrets(text, name=name), lambda hit: f"[REDACTED:{hit.kind}]")


# --- personal data -----------------------------------------------------------------------------

# One character class first (so `re` skips everything else in C), then which number it starts.
# E-mail addresses are anchored on `@` and extended both ways in Python.
_PII_RE = LazyPattern(
    r"[@+(0-9](?:"
    r"(?P<at>(?<=@))"
    # Every number below has 7 or more digits: a cheap look ahead rules out dates, versions and counts.
    r"|(?=[0-9 ().\/-]{6})(?:"
    # International: + and 8-15 digits with single separators (E.164 allows at most 15).
    r"(?P<intl>(?<=\+)[1-9](?:[ .()/-]{0,2}[0-9]){7,14})"
    # North American: (415) 555-2671, 415-555-2671, 415.555.2671, 1-415-555-2671.
    r"|(?P<nanp_paren>(?<=\()[2-9][0-9]{2}\) ?[2-9][0-9]{2}[-. ][0-9]{4})"
    r"|(?P<nanp_1>(?<=1)[-. ](?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[-. ])[2-9][0-9]{2}[-. ][0-9]{4})"
    r"|(?P<nanp>(?<=[2-9])[0-9]{2}(?P<sep>[-. ])[2-9][0-9]{2}(?P=sep)[0-9]{4})"
    # French pairs: 01 23 45 67 89, 06.12.34.56.78.
    r"|(?P<fr>(?<=0)[1-9](?P<frsep>[ .-])[0-9]{2}(?:(?P=frsep)[0-9]{2}){3})"
    # Trunk-prefixed national numbers in groups: 020 7946 0958, 030 12345678, 010-12345678, 090-1234-5678.
    r"|(?P<trunk>(?<=0)[1-9][0-9]{1,4}[ /-][0-9]{3,8}(?:[ -][0-9]{3,4})?)"
    # Chinese mobile numbers: 11 digits from 13x to 19x, plain or 3-4-4.
    r"|(?P<cn>(?<=1)[3-9][0-9](?:[0-9]{8}|(?P<cnsep>[ -])[0-9]{4}(?P=cnsep)[0-9]{4}))"
    r"))"
)
_HEX_BEFORE = LazyPattern(r"[0-9A-Fa-f]{2} \Z")
_HEX_AFTER = LazyPattern(r" [0-9A-Fa-f]{2}(?![0-9A-Za-z])")
_PHONE_CONTEXT = LazyPattern(
    r"(?i:phone|mobile|cell|tel\b|whatsapp|wechat|sms)|手机|手機|电话|電話|联系|聯繫|微信|号码|號碼"
)
_EMAIL_LOCAL_TAIL = LazyPattern(r"[A-Za-z0-9._%+-]{1,64}\Z")
_EMAIL_DOMAIN = LazyPattern(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?P<tld>[A-Za-z]{2,24})(?![A-Za-z0-9-])"
)
# Addresses that name nobody: RFC 2606/6761 documentation and test domains, and any `example.*`.
_RESERVED_DOMAINS = ("example.com", "example.org", "example.net", ".example", ".test", ".invalid", ".localhost")
# `icon@2x.png` is a retina asset and `container@db.service` a systemd unit, not addresses.
_NOT_TLDS = _words(
    "png jpg jpeg gif svg webp ico bmp js mjs cjs ts tsx jsx css scss json yaml yml toml md txt html "
    "py rs go rb java kt lock log sh zip gz tar pdf wasm map service socket timer target mount slice scope"
)


# What comes before the password of `scheme://user:password@host`, which is no e-mail address
# (and whose masked form would show the password's first characters).
_URL_USERINFO = LazyPattern(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/@]*:\Z")


def _email_hit(text: str, at: int) -> Hit | None:
    local_m = _EMAIL_LOCAL_TAIL.search(text, max(0, at - 64), at)
    domain_m = _EMAIL_DOMAIN.match(text, at + 1, at + 1 + _LONGEST_DOMAIN)
    if local_m is None or domain_m is None:
        return None
    local = local_m.group().lstrip("._%+-")
    start = at - len(local)
    end = domain_m.end()
    domain = domain_m.group().lower()
    if not local or text[start - 1 : start] == "/":  # `https://token@host`, not an address
        return None
    if _URL_USERINFO.search(text, max(0, start - 256), start):  # `scheme://user:password@host`: S002's
        return None
    # `git@github.com:org/repo`: an SSH login, as is anything followed by scp's `:path`.
    if local == "git" or (text[end : end + 1] == ":" and text[end + 1 : end + 2].strip()):
        return None
    # noreply addresses are made to be published (every commit trailer carries one).
    if "noreply" in local.lower() or "no-reply" in local.lower() or "noreply" in domain:
        return None
    if (
        domain.endswith(_RESERVED_DOMAINS)
        or "example" in domain.split(".")
        or domain_m.group("tld").lower() in _NOT_TLDS
    ):
        return None
    return Hit("email", start, end, mask(text[start:end]), "E-mail address")


def _phone_hit(text: str, m: re.Match[str]) -> Hit | None:
    start, end = m.span()
    kind = m.lastgroup
    before, after, after2 = text[start - 1 : start], text[end : end + 1], text[end + 1 : end + 2]
    # Part of a longer number, word, version, IP, date or address: 1.2.3, 10.0.0.1, v2, 2024-01-15,
    # #12345, $1234, 13800138000@163.com. Non-ASCII neighbours are fine: Chinese text has no spaces.
    if before and before.isascii() and (before.isalnum() or before in "_.+/-#$@"):
        return None
    if after and after.isascii() and (after.isalnum() or after in "_@"):
        return None
    if after and after in ".-/:" and after2.isdigit():
        return None
    if kind == "trunk" and sum(c.isdigit() for c in m.group()) < 9:
        return None
    # `<Buffer 01 02 03 04 05>`, CAN frames: two-digit groups in a hex dump look like French numbers.
    if kind == "fr" and (
        _HEX_BEFORE.search(text, max(0, start - 3), start)
        or _HEX_AFTER.match(text, end)
        or all(pair[0] == "0" for pair in re.split(r"\D", m.group())[1:])
    ):
        return None
    # A bare 11-digit number is as often a byte count (17179869184) as a Chinese mobile number.
    if kind == "cn" and m.group("cnsep") is None and not _PHONE_CONTEXT.search(text, max(0, start - 30), start):
        return None
    return Hit("phone", start, end, mask(m.group()), "Phone number")


def find_pii(text: str) -> list[Hit]:
    """Personal data in `text`: e-mail addresses and phone numbers."""
    hits: list[Hit] = []
    for m in _PII_RE.finditer(text):
        hit = _email_hit(text, m.start()) if m.lastgroup == "at" else _phone_hit(text, m)
        if hit is not None:
            hits.append(hit)
    return hits


# --- injected instructions ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    """Instruction-like phrasing: `pattern` (lower case, matched against lower-cased text), and the
    `words` of which every match contains at least one, in any letter case."""

    words: tuple[str, ...]
    pattern: str
    imperative: bool = False  # an order only at the start of a sentence: "Act as my lawyer."


_EARLIER = r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|existing)"
_ORDERS = r"(?:instructions?|prompts?|directions|directives|guidelines|rules|commands)"
_SENSITIVE = (
    r"(?:\b(?:secrets?|tokens?|api[ _-]?keys?|credentials?|passwords?|env(?:ironment)? var(?:iable)?s"
    r"|ssh keys?|private keys?|cookies|conversation|chat history|system prompt|memor(?:y|ies))\b|\.env\b)"
)

_RULES = (
    # English
    _Rule(
        ("ignor", "disregard", "forget", "overrid"),
        rf"(?:ignore|disregard|forget|override)\s+(?:(?:all|any|of|the|your|my|these|those)\s+){{0,3}}"
        rf"{_EARLIER}\s+(?:\w+\s+){{0,2}}?{_ORDERS}\b"
        rf"|(?:ignore|disregard|forget|override)\s+(?:all|your)\s+{_ORDERS}\b"
        r"|(?:ignore|disregard|forget)\s+(?:everything|anything)\s+"
        r"(?:above|before|previously|you(?:'ve| have)? been told)",
    ),
    _Rule(("must now",), r"you\s+must\s+now\b"),
    _Rule(("now on",), r"from\s+now\s+on,?\s+you\s+(?:will|must|shall|are|should)\b"),
    _Rule(("new instruc",), r"new\s+instructions?\s*:"),
    _Rule(("system prompt",), r"system\s+prompt\s*:"),
    _Rule(
        ("reveal", "print your", "output your", "repeat your", "disclose your", "leak your"),
        r"(?:reveal|print|output|repeat|disclose|leak)\s+(?:me\s+)?your\s+(?:full\s+|entire\s+)?"
        r"(?:system\s+prompt|(?:initial|original|hidden|secret)\s+instructions)",
    ),
    _Rule(
        ("act as", "pretend to be", "pretend you", "pretend that you"),
        r"act\s+as\s+(?:an?|my|the|your|(?:if|though)\s+you)\b|pretend\s+(?:to\s+be|you\s+are|that\s+you)\b",
        imperative=True,
    ),
    _Rule(
        (
            "tell the user",
            "inform the user",
            "telling the user",
            "informing the user",
            "notifying the user",
            "to the user",
            "from the user",
        ),
        r"(?:do\s+not|don'?t|never)\s+(?:tell|inform)\s+the\s+user\b(?!\s+(?:to|how)\b)"
        r"|(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|these|that|it)(?:\s+\w+)?\s+to\s+the\s+user\b"
        r"|without\s+(?:telling|informing|notifying)\s+the\s+user\b"
        r"|(?:hide|conceal|keep)\s+(?:this|it|these)\s+(?:(?:secret|hidden)\s+)?from\s+the\s+user\b",
    ),
    # Exfiltration: a verb, something sensitive, then "to" a remote URL (not localhost) or a webhook.
    _Rule(
        ("://", "webhook"),
        rf"(?:send|post|upload|forward|transmit|exfiltrate|submit)\b[^\n.]{{0,40}}?{_SENSITIVE}[^\n]{{0,40}}?"
        r"\b(?:to|at|via)\s+[<`\"']?(?:https?://(?!localhost|127\.|0\.0\.0\.0)|\S*webhook)",
    ),
    # German
    _Rule(
        ("ignor", "vergiss", "vergessen"),
        r"(?:ignorier\w*|vergiss|vergessen\s+sie)\s+(?:(?:alle|deine|ihre|die|sämtliche)\s+){0,2}"
        r"(?:(?:vorherigen|vorigen|bisherigen|obigen|früheren|vorangegangenen)\s+)"
        r"(?:anweisungen|instruktionen|befehle|regeln|vorgaben)"
        r"|(?:ignorier\w*|vergiss)\s+(?:alle|deine)\s+(?:anweisungen|instruktionen|befehle|vorgaben)",
    ),
    _Rule(("ab jetzt", "ab sofort"), r"ab\s+(?:jetzt|sofort)\s+(?:bist|wirst|musst|sollst)\s+du\b"),
    _Rule(("anweisung",), r"neue\s+anweisungen\s*:"),
    _Rule(
        ("nutzer", "anwender"),
        r"(?:sag|sage|erzähl|erzähle|verrate)\s+(?:es\s+|das\s+)?(?:dem|den)\s+(?:benutzer|nutzer|anwender)\w*\s+nicht",
    ),
    # Spanish
    _Rule(
        ("ignor", "olvid"),
        r"(?:ignora|ignore|ignorar|olvida|olvide|olvidar)\s+(?:(?:todas|las|tus|sus)\s+){0,2}"
        r"(?:instrucciones|indicaciones|órdenes|reglas)\s+(?:anteriores|previas|precedentes|de\s+arriba)"
        r"|(?:ignora|olvida)\s+(?:todas\s+(?:las\s+|tus\s+)?|tus\s+)(?:instrucciones|indicaciones|órdenes)",
    ),
    _Rule(
        ("ahora debes", "ahora, debes", "ahora vas", "ahora, vas"),
        r"a\s+partir\s+de\s+ahora,?\s+(?:debes|vas\s+a)\b",
    ),
    _Rule(("nuevas instruc",), r"nuevas\s+instrucciones\s*:"),
    _Rule(
        ("diga",),
        r"no\s+(?:le\s+)?digas?\s+(?:nada\s+)?(?:esto\s+)?al\s+usuario",
    ),
    # French
    _Rule(
        ("ignor", "oubli"),
        r"(?:ignore[zr]?|oublie[zr]?)\s+"
        r"(?:(?:toutes|tous|les|tes|vos)\s+){0,2}(?:instructions|consignes|directives|règles)\s+"
        r"(?:précédentes|antérieures|ci-dessus)"
        r"|(?:ignore[zr]?|oublie[zr]?)\s+(?:toutes\s+(?:les\s+|tes\s+|vos\s+)?|tes\s+|vos\s+)(?:instructions|consignes)",
    ),
    _Rule(
        ("à partir", "désormais", "dorénavant"),
        r"(?:à\s+partir\s+de\s+maintenant|désormais|dorénavant),?\s+(?:tu|vous)\s+(?:es|êtes|dois|devez|vas|allez)\b",
    ),
    _Rule(("nouvelles instruc",), r"nouvelles\s+instructions\s*:"),
    _Rule(
        ("à l'utilisateur", "à l’utilisateur"),
        r"ne\s+(?:le\s+|lui\s+)?(?:dis|dites)\s+(?:rien|pas)\s+à\s+l['’]utilisateur",
    ),
    # Chinese (simplified and traditional)
    _Rule(
        ("忽略", "无视", "無視", "忽视", "忽視", "忘记", "忘記", "忘掉", "不要理", "不要遵守"),
        r"(?:忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉|不要理会|不要理會|不要遵守)(?:掉)?(?:你)?"
        r"(?:之前|以前|先前|此前|上面|以上|前面|上述|原来|原來|所有|全部|一切)(?:的)?(?:所有|全部|一切)?(?:的)?"
        r"(?:指令|指示|说明|說明|提示词|提示詞|提示|规则|規則|命令|设定|設定)",
    ),
    # 从现在开始 ("from now on") is an order only when 你 (you) must follow.
    _Rule(
        ("从现在", "從現在"),
        r"(?:从现在(?:开始|起)|從現在(?:開始|起))[，,]?\s*你(?:必须|必須|将|將|要|只能|就是|是)",
    ),
    _Rule(("指令",), r"新的?指令\s*[:：]"),
    _Rule(("系统提示", "系統提示"), r"系(?:统|統)提示(?:词|詞)?\s*[:：]"),
    _Rule(("告诉", "告訴"), r"(?:不要|别|別|切勿|不可)(?:告诉|告訴)(?:用户|用戶|使用者)"),
    # Japanese and Russian: the classic opening only.
    _Rule(
        ("無視", "忘れ"),
        r"(?:以前|前|上記|これまで|先)の(?:すべての|全ての)?(?:指示|命令|指令|ルール)を(?:すべて)?(?:無視|忘れ)",
    ),
    _Rule(
        ("игнорир", "забуд"),
        r"(?:игнорируй(?:те)?|забудь(?:те)?)\s+(?:все\s+)?(?:предыдущие|прежние|вышеуказанные)\s+"
        r"(?:инструкции|указания|команды)",
    ),
)
# Letters by frequency in the memories of the shared corpus, commonest first. An anchor word is
# found by its rarest character; other ASCII characters count as common, anything else (CJK,
# Cyrillic, accented letters) as rare.
_LETTER_FREQUENCY = " etaoisrnlcdpmhugfbywvkxjqz"


def _rarity(c: str) -> int:
    return _LETTER_FREQUENCY.find(c) if c.isascii() else len(_LETTER_FREQUENCY)


def _anchor_pattern(words: dict[str, frozenset[int]]) -> tuple[str, dict[str, frozenset[int]]]:
    """A regex that finds `words` in any letter case at the speed of a character-class scan, and
    what each of its matches (lower-cased) calls for.

    Each word is anchored on one character c, as rare as possible and shared with other words
    where that saves a character. Both cases of c are literal alternatives, followed by both cases
    of the next character as literals: `re` skips to the next c in C and rejects most candidates
    with one comparison. A lookbehind then checks the whole word. A match covers the word from c
    on; words that share that tail share the lookup entry."""
    chosen = {max(word, key=_rarity) for word in words}
    for c in sorted(chosen, key=_rarity):  # commonest first: drop it if every word has another chosen character
        if all(any(x in chosen and x != c for x in word) for word in words):
            chosen.discard(c)
    tails: dict[str, frozenset[int]] = {}
    checks: dict[str, list[str]] = {}  # tail -> a lookbehind for each word that ends in it
    for word, value in words.items():
        at = max((k for k in range(len(word)) if word[k] in chosen), key=lambda k: _rarity(word[k]))
        tails[word[at:]] = tails.get(word[at:], frozenset()) | value
        checks.setdefault(word[at:], []).append(f"(?<=(?i:{re.escape(word)}))")
    by_char: dict[str, list[str]] = {}
    for tail, lookbehinds in checks.items():
        check = f"(?:{'|'.join(lookbehinds)})"
        rest = tail[1:]
        alternatives = [
            f"{re.escape(r)}(?i:{re.escape(rest[1:])}){check}" for r in {rest[:1].lower(), rest[:1].upper()}
        ]
        for c in {tail[0].lower(), tail[0].upper()}:
            by_char.setdefault(c, []).extend(alternatives if rest else [check])
    chars = sorted(by_char, key=lambda c: (_rarity(c.lower()), c))
    return "|".join(f"{re.escape(c)}(?:{'|'.join(by_char[c])})" for c in chars), tails


@functools.cache
def _instruction_anchors() -> tuple[re.Pattern[str], dict[str, frozenset[int]]]:
    """The anchor pattern and what each match calls for. Built and compiled on first use: a large
    pattern that only lint S004 and the write path's screen need, not a hook that masks secrets."""
    source, rules_of_tail = _anchor_pattern(
        {w: frozenset(i for i, r in enumerate(_RULES) if w in r.words) for r in _RULES for w in r.words}
    )
    return re.compile(source), rules_of_tail


_EVERY_RULE = frozenset(range(len(_RULES)))
# "act as a proxy" is ordinary prose; "Act as my lawyer." or "you must now act as a …" is an order.
_IMPERATIVE_LEAD = LazyPattern(
    r"(?:^|[.!?:;>\n]|\byou\s+(?:will|must|should|shall)(?:\s+now)?|\bnow,?|\bplease)[\s*_\"'`-]*\Z", re.IGNORECASE
)
_RADIUS = 150  # no rule's match reaches further than this from its anchor word


def _windows(text: str) -> Iterator[tuple[int, int, set[int]]]:
    """Disjoint stretches of `text` around anchor words, widened so no word is cut, with the rules to try."""
    start = end = -1
    rules: set[int] = set()
    anchors, rules_of_tail = _instruction_anchors()
    for m in anchors.finditer(text):
        lo, hi = max(0, m.start() - _RADIUS), min(len(text), m.end() + _RADIUS)
        if lo > end >= 0:
            yield start, end, rules
            start, rules = -1, set()
        if start < 0:
            start = lo
            while start > max(0, end) and lo - start < 32 and text[start - 1].isalnum():
                start -= 1
        end = hi
        while end < len(text) and end - hi < 32 and text[end].isalnum():
            end += 1
        # A case-insensitive match can lower-case differently (`İ`): then try every rule.
        rules |= rules_of_tail.get(m.group().lower(), _EVERY_RULE)
    if start >= 0:
        yield start, end, rules


def find_instructions(text: str) -> list[Hit]:
    """Text that tries to give the agent orders: 'ignore previous instructions' and its relatives."""
    found: dict[int, Hit] = {}
    for lo, hi, rules in _windows(text):
        window = text[lo:hi]
        lower = window.lower()
        same = len(lower) == len(window)
        for i in rules:
            # Rules run on the lower-cased window (case-insensitive alternations are many times slower
            # in `re`), unless lower-casing changed its length (`İ` becomes two characters). Compiled
            # on first use (and kept in `re`'s cache): most scans never need most rules.
            rule = re.compile(_RULES[i].pattern) if same else re.compile(_RULES[i].pattern, re.IGNORECASE)
            for m in rule.finditer(lower if same else window):
                start, end = lo + m.start(), lo + m.end()
                first, before = text[start], text[start - 1 : start]
                if first < "\u0500" and before.isalpha() and before < "\u0500":  # inside a Latin/Cyrillic word
                    continue
                if _RULES[i].imperative and not _IMPERATIVE_LEAD.search(text, max(0, start - 40), start):
                    continue
                phrase = " ".join(text[start:end].split())[:80]
                found.setdefault(start, Hit("instruction", start, end, phrase, "Instruction-like text"))
    return [found[start] for start in sorted(found)]


# The tags prompts and the harnesses around models mark their blocks with: a system prompt, a system
# reminder (Claude Code's wrapper for hook output), a turn, a memory, a tool's result. A memory
# holding one opens or closes such a block (`</memory><system>…`); HTML and a placeholder such as
# `<user>` or `<path>` are not among them.
_PROMPT_TAG = LazyPattern(
    r"</?(?:system(?:[-_](?:reminder|prompt|message|instructions?))?|memor(?:y|ies)|instructions?|human|assistant"
    r"|tool_(?:use|result)|function_(?:calls|results)|antml:[a-z_]+)(?:\s[^<>\n]{0,200})?/?>",
    re.IGNORECASE,
)


def find_prompt_tags(text: str) -> list[Hit]:
    """Tags that open or close a block of an agent's prompt: `<system>`, `</memory>`, `</system-reminder>`."""
    if "<" not in text:
        return []
    return [Hit("prompt-tag", m.start(), m.end(), m.group(), "Prompt markup") for m in _PROMPT_TAG.finditer(text)]
