"""Passwords in prose: "my bank password is X", "the wifi password is: X", "password for the server: X",
"use X as the password", "set the password to X", the Spanish, German and French forms ("mi contraseña es X",
"das Passwort lautet X", "Kennwort: X", "le mot de passe est : X"), and PINs ("my pin is 1234", four digits or more).

Only the value goes; the sentence stays. A value that is an ordinary word of the sentence ("the password is
wrong", "password is not set", "your password is required") is not a password: `PROSE_WORDS` lists the words
that follow such phrases in the four languages, and after a bare "is" (no colon, no quotes) a lowercase word
that reads as an adjective or participle ("expired", "changing", "readable") is kept too. JSON's ASCII escapes
are read ("contrase\\u00f1a"). `password: X` and
`password=X` are the assignment rule's (`rules_context`), which runs first.
"""

from __future__ import annotations

import re
from typing import Final

from ghost_agent.privacy.placeholders import PASSWORD
from ghost_agent.privacy.rule import (
    ALNUM,
    DIGITS,
    RECORD_SEP,
    Hit,
    Rule,
    glued,
    is_inert_value,
    lower_same_length,
    stem_searcher,
)

# Words that follow "password is" / "contraseña es" / "Passwort ist" / "mot de passe est" in sentences that
# give no password: articles, pronouns, negations, adverbs, and what is said about passwords.
PROSE_WORDS: Final = frozenset("""
a an the this that these those it its my your our his her their me you we they one some any no not none never
is are was were be been being am has have had do does did will would should can could may might must shall
and or but if so as at by for from in into of on onto to too with without about also still just only now then
here there where when which who what how why very really quite already yet again always usually probably
required wrong incorrect invalid correct right valid same different empty blank missing unknown unset set
stored saved hashed encrypted salted encoded hidden masked visible shown secret private public optional mandatory
weak strong short long simple complex easy hard secure insecure safe unsafe good bad new old old-fashioned
expired expiring reset changed updated forgotten lost compromised leaked case-sensitive sensitive ok okay fine
needed necessary important mine yours ours same-as like unlike because since until unless than more less
something anything nothing everything someone anyone
securely safely correctly properly currently actually definitely simply clearly likely exactly only really
usually probably automatically randomly
el la los las un una unos unas lo mi tu su nuestro no es son era fue ser está esta este ese esa y o pero si
de del en con sin por para que muy ya aún todavía incorrecta incorrecto correcta correcto válida inválida
requerida obligatoria segura débil vacía nueva antigua igual otra
der die das ein eine einen mein dein sein ihr unser nicht kein keine ist sind war und oder aber wenn von mit
für zu im in auf auch noch schon falsch richtig ungültig gültig erforderlich sicher unsicher leer neu alt gleich
le les un une mon ton son notre votre leur ne pas est sont était et ou mais si de du des en avec sans pour que
très déjà encore incorrect faux fausse correct correcte valide invalide requis obligatoire sûr vide nouveau
nouvelle ancien ancienne même
""".split())
_ADJECTIVE_ENDINGS = ("ed", "ing", "able", "ible", "ful", "less", "ive", "ous", "ent", "ant", "ical")
_ASSIGNMENT_KEYWORDS = ("password", "passwd", "passphrase")  # "password: X" is the assignment rule's

_QUOTED = "|".join(f"{o}[^{c}\\n\\r\\x00]{{1,128}}+{c}" for o, c in (('"', '"'), ("'", "'"), ("“", "”"), ("«", "»"),
                                                                        ("`", "`")))
_COPULA = r"(?<![a-z])(?:is|was|ist|war|lautet|es|era|est|était|sera|will be|would be)(?![a-z])(?:[ \t]*+:)?"
# Matched at each occurrence of a stem (`_STEMS`) in the lowercase text.
_PROSE_RE = re.compile(
    r"(?P<kw>pass(?<!_pass)(?:word|wort|wd|code|phrase)|passe(?<=mot de passe)"  # not <REDACTED_PASSWORD>
    r"|contrase(?:ña|na|\\u00f1a)|kennwort)(?![a-z0-9_])"
    r"(?:(?P<qual>[ \t]++(?:for|of|on|at|de|del|de la|du|des|für|fuer|zum|zur|vom|von|pour|para|d')(?![a-z])"
    r"[^\n\r\x00:=.!?;,\"]{0,40}?)?"
    rf"[ \t]*+(?P<cop>[:=][ \t]*+(?:{_COPULA})?|{_COPULA}|(?<![a-z])to(?![a-z]))[ \t]*+"
    rf"(?P<val>{_QUOTED}|[^\s\x00]{{1,128}}+))?"  # optional: "use X as the password" ends at the keyword
)
_STEMS = ("pass", "contrase", "kennwort")
# "use X as the password", "usa X como contraseña", "utilise X comme mot de passe", "nimm X als Passwort":
# searched backwards from a keyword, in a window that ends where the keyword starts.
_WORD_START = r"(?:(?<![a-z0-9])|(?<=\\[nrt])|(?<=%[0-9a-f]{2}))"  # a word's start, or right after an escape
_USE_AS_RE = re.compile(
    rf"{_WORD_START}(?:use|using|try|usa|usar|utilise|utiliser|utilisez|nimm|nehmt|benutze|verwende)[ \t]++"
    rf"(?P<val>{_QUOTED}|[^\s\x00]{{1,128}}?)[ \t]++(?:as|como|comme|als)[ \t]++"
    r"(?:[a-zà-ÿ-]{1,20}[ \t]++){0,3}?"  # "the", "my wifi", "el nuevo", "mot de"
    r"\Z"
)
_USE_AS_REACH = 160
_SET_VERB = re.compile(rf"{_WORD_START}(?:set|change|changed|reset|update|updated)\b")
_TRAILING = ".,;:!?)]}\"'`"
_ESCAPES = ("\\n", "\\r", "\\t", '\\"', "\\'", "%20")  # JSON and URL escapes end an unquoted value


def _value_ok(value: str, bare_verb: bool) -> bool:
    """Whether an unquoted value after a password phrase can be the password itself."""
    if not value or is_inert_value(value) or value.lower() in PROSE_WORDS:
        return False
    if bare_verb and value.isalpha() and value.islower():
        return not value.endswith(_ADJECTIVE_ENDINGS)  # "is expired", "is changing", "is case-sensitive"
    return True


def _value_span(s: str, start: int, end: int, bare_verb: bool) -> tuple[int, int] | None:
    """The password in `s[start:end]`: inside its quotes, or without the sentence's trailing punctuation."""
    if s[start] in "\"'“«`":
        return (start + 1, end - 1) if not is_inert_value(s[start + 1:end - 1]) else None
    for escape in _ESCAPES:
        at = s.find(escape, start, end)
        end = at if at > start else end
    if is_inert_value(s[start:end]):
        return None
    while end > start and s[end - 1] in _TRAILING:
        end -= 1
    return (start, end) if _value_ok(s[start:end], bare_verb) else None


def _prose(s: str, m: re.Match[str], floor: int) -> Hit | int | None:
    kw_start = m.start("kw") - (len("mot de ") if m.group("kw") == "passe" else 0)
    if glued(s, kw_start, ALNUM):
        return None  # "mypassword is", "_password is"
    lo = max(floor, kw_start - _USE_AS_REACH)
    before = lower_same_length(s[lo:kw_start])
    use_as = _USE_AS_RE.search(before)
    if use_as is not None:
        span = _value_span(s, lo + use_as.start("val"), lo + use_as.end("val"), bare_verb=False)
        return Hit(*span, PASSWORD) if span else None
    if m.start("cop") < 0:
        return None
    cop = m.group("cop").strip()
    if cop == "to":
        if _SET_VERB.search(before, max(0, len(before) - 40)) is None:
            return None  # only "set/change (the) password to X"
    elif cop in (":", "=") and m.start("qual") < 0 and m.group("kw") in _ASSIGNMENT_KEYWORDS:
        return None
    bare_verb = cop[0] not in ":=" and not cop.endswith(":") and cop != "lautet"  # "lautet": "reads", a colon
    span = _value_span(s, m.start("val"), m.end("val"), bare_verb)
    return Hit(*span, PASSWORD, resume=span[1]) if span else m.start("val")


# A PIN: four digits or more right after "pin (code|number) is / : / =" (and the es/de/fr words); anchored on the
# digits in the text's shape, the words are checked looking back.
_PIN_RE = re.compile(rb"9999(?<!99999)9{0,8}+(?!9)")
_PIN_CONTEXT = re.compile(
    rf"{_WORD_START}(?<!_)(?:pin|código pin|code pin)(?:[ -]?(?:code|number|no\.?|nummer))?[ \t]*+"
    r"(?:[:=][ \t]*+(?:(?:is|was|es|ist|lautet|est)(?![a-z]))?|(?:is|was|es|ist|lautet|est)(?![a-z])[ \t]*+:?)"
    r"[ \t]*+[\"'“]?\Z"
)
_PIN_REACH = 32


def _pin(s: str, m: re.Match[bytes], floor: int) -> Hit | None:
    start, end = m.start(), m.end()
    if glued(s, start, ALNUM) or (end < len(s) and (s[end] in ALNUM or (
            s[end] in ".,:/-" and end + 1 < len(s) and s[end + 1] in DIGITS))):
        return None  # part of a word, a version, a date, a time
    window = s[max(floor, start - _PIN_REACH):start]
    window = window[window.rfind(RECORD_SEP) + 1:].lower()
    if "pin" not in window or _PIN_CONTEXT.search(window) is None:
        return None  # "pin 1234" (no verb or colon) is too weak
    return Hit(start, end, PASSWORD)


PROSE_PASSWORD_RULE = Rule("prose_password", _PROSE_RE, _prose, on_lower=True,
                           searcher=stem_searcher(_PROSE_RE, _STEMS))
PIN_RULE = Rule("pin", _PIN_RE, _pin, on_shape=True)

__all__ = ["PIN_RULE", "PROSE_PASSWORD_RULE", "PROSE_WORDS"]
