"""The contradiction shapes and reply-aware cues added after batch e: how a follow-up relates to what the reply
asserted (`user_correction_relations`), bare values and restated answers (`user_correction_values`), and the
exchange facts they read (`user_correction_exchange`).

Development cases: written while these mechanisms were built, in scratch rounds that were each run once before
being tuned on (their first-run figures are in
`tests/feedback/correction/data/README.md`). None is from the labelled set.
"""

from __future__ import annotations

import time

import pytest

from ghost_agent.feedback.correction.contradiction import STRONG, WEAK, contradiction
from ghost_agent.feedback.correction.cues import normalize
from ghost_agent.feedback.correction.detector import classify_user_correction
from ghost_agent.feedback.correction.exchange import case_shape, exchange, number_kinds, numbers
from ghost_agent.feedback.correction.score import score_cues
from ghost_agent.feedback.correction.values import _arithmetic, _rounds


@pytest.mark.parametrize(
    ("prior", "reply", "follow_up", "shape"),
    [
        # the opposite of the reply's yes or no, or a denial of its answer
        ("Is Python's sort stable?", "No, Python's sort is not stable.", "It is stable, Timsort is stable", "polarity"),
        ("Is 1 a prime number?", "Yes, 1 is prime.", "1 isn't prime by definition", "polarity"),
        ("Does Python's range include the end value?", "Yes, range(5) includes 5.", "It doesn't, range(5) stops at 4",
         "polarity"),
        ("Is a tomato a vegetable?", "Yes, it's a vegetable.", "botanically it's a fruit", "polarity"),
        ("Is JSON a subset of JavaScript?", "No, they're unrelated.", "it mostly is", "polarity"),
        ("What's the abbreviation for kilogram?", "KG", "KG isn't the SI symbol", "denial"),
        ("What's the tallest waterfall?", "Niagara Falls is the tallest.", "Niagara isn't even close", "denial"),
        # a tie, another action, a denied action asserted, a changed list
        ("Which is heavier, a kilo of feathers or a kilo of steel?", "The steel is heavier.", "they weigh the same",
         "sameness"),
        ("What does d.get('missing') return?", "It returns 0.", "It returns None", "parallel"),
        ("What does x ** 2 do in Python?", "It multiplies x by 2.", "It squares x", "parallel"),
        ("What does `pass` do in Python?", "It exits the function.", "it does nothing", "parallel"),
        ("Round 2.675 to two decimals", "round(2.675, 2) gives 2.68", "it prints 2.67", "parallel"),
        ("What does `rm -i` do?", "It removes files without asking.", "-i makes it ask before each removal",
         "unnegated"),
        ("List the first three prime numbers", "1, 2, 3", "1 isn't prime, it's 2, 3, 5", "list"),
        # bare values: a word, an option, another unit, none, a term of the request, a command
        ("What's the unit of electrical resistance?", "Resistance is measured in amperes.", "ohms", "value"),
        ("Which HTTP method is idempotent: POST or PUT?", "POST is idempotent.", "PUT is", "value"),
        ("Which came first, the printing press or the telescope?", "The telescope.",
         "the printing press, around 1440", "value"),
        ("What's the speed of light?", "About 300,000 m/s.", "300,000 km/s", "value"),
        ("How many bones does a shark have?", "About 300.", "none, sharks have cartilage", "value"),
        ("What's the keyword to define a function in JavaScript?", "def", "function. def is Python", "value"),
        ("How do I check disk space in Linux?", "Use `ls -h`.", "df -h", "value"),
        ("How do I make text bold in CSS?", "font-style: bold;", "font-weight: bold", "value"),
        ("What's the capital of Switzerland?", "Zurich.", "Bern, Zurich's just the largest city", "value"),
        ("What's 7 times 8?", "7 × 8 = 54", "three lol", "value"),
        # restated answers, hedged or asked back
        ("When did the Titanic sink?", "1920.", "it sank in 1912", "restated"),
        ("How many bones in the human hand?", "There are 12 bones in the hand.", "I think it's 27", "restated"),
        ("What's the CSS property for text color?", "font-color", "it's just color", "restated"),
        ("How do I get the length of a list in Python?", "Use `list.length`.", "it's len(list)", "restated"),
        ("Translate 'good morning' to Italian", "Buona notte.", "that's good night. buongiorno", "restated"),
        ("What's the capital of Australia?", "Sydney.", "Isn't it Canberra?", "asked"),
        ("What's 3/4 as a decimal?", "0.34", "0.75 surely?", "asked"),
        # a new name, figure or piece of code in the role asked about; the unpicked option; a winner over the answer
        ("What's the JS operator for strict equality?", "==", "=== is strict, == coerces", "attribution"),
        ("Who wrote 1984?", "Aldous Huxley.", "orwell wrote 1984, huxley wrote brave new world", "attribution"),
        ("What's the HTTP status for a redirect that's permanent?", "302.", "301 is permanent, 302 is temporary",
         "attribution"),
        ("Which element is liquid at room temperature, mercury or iron?", "Iron.", "mercury is the liquid one",
         "attribution"),
        ("Who won the 2018 FIFA World Cup?", "Croatia won the 2018 World Cup.", "France beat Croatia in the final",
         "comparison"),
        ("Which is denser, ice or water?", "Ice is denser than water.", "water is denser, that's why ice floats",
         "comparison"),
        ("Give me today's date in ISO format", "03/14/2024", "ISO is 2024-03-14", "answer"),
        ("How do I comment a line in Python?", "Use // at the start of the line.", "Python uses #", "answer"),
        ("What's the index of the first element of a Lua table?", "0, like most languages.", "Lua starts at 1",
         "number"),
        ("What does HTTP 403 mean?", "403 means Not Found.", "404 is not found, 403 is forbidden", "transfer"),
        ("What's the largest desert in Asia?", "The Sahara.", "the Sahara is in Africa. the Gobi", "claim"),
    ],
)  # fmt: skip
def test_counter_statements_of_the_new_shapes(prior: str, reply: str, follow_up: str, shape: str) -> None:
    hit = contradiction(follow_up, prior, reply)
    assert hit is not None and hit.weight == STRONG, hit
    assert hit.text.startswith(shape), hit.text
    assert classify_user_correction(prior, follow_up, reply).is_correction


@pytest.mark.parametrize(
    ("prior", "reply", "follow_up"),
    [
        # remarks closed by "though", comparisons on another property, in another case or against something else
        ("Which is closer to the sun, Venus or Mercury?", "Mercury is the closest planet to the sun.",
         "Venus is the hottest though"),
        ("What's the boiling point of water in Fahrenheit?", "212°F at sea level.",
         "It's lower up in the mountains though"),
        ("Which is faster, C or Python?", "C, typically by a large margin.", "Python is faster to write"),
        ("What's the fastest land animal?", "The cheetah.", "Peregrine falcons are faster in a dive"),
        ("Which is older, Rome or Athens?", "Athens.", "Rome is older than Paris though"),
        ("What's the largest ocean?", "The Pacific.", "The Atlantic is second largest"),
        ("What's the largest mammal?", "The blue whale.", "The elephant is the largest land mammal"),
        ("How many Great Lakes are there?", "Five.", "Superior is the biggest"),
        ("Which is bigger, the sun or the moon?", "The sun, by far.", "Looks the same size in the sky though"),
        # the answer for another case, input or time; the reply's figure rounded or worked out
        ("What's the file extension for JavaScript files?", ".js", ".ts for TypeScript"),
        ("Translate 'dog' to Spanish", "perro", "perra for a female dog"),
        ("What's the capital of Japan?", "Tokyo.", "Kyoto was before"),
        ("What's the capital of Egypt?", "Cairo.", "Alexandria was the capital in antiquity"),
        ("What does `len('hello')` return?", "5.", "len('') is 0"),
        ("What's the result of 10 % 3 in Python?", "1", "-10 % 3 is 2 in Python"),
        ("What's the speed of light in vacuum?", "299,792 km/s.", "Roughly 300,000"),
        ("How many seconds in an hour?", "3600.", "60 times 60"),
        ("What's the boiling point of water in Kelvin?", "373 K.", "About 373.15 to be exact"),
        ("What does `git reset --hard` do?", "It resets HEAD and discards working changes.", "Scary command"),
        ("How many hours ahead is Tokyo of London in winter?", "9 hours.", "8 in summer"),
        # follow-on facts about the reply's neighbours, remarks that are no values, the reply's action reworded
        ("What's the default port for HTTP?", "80.", "443 is HTTPS"),
        ("Which came first, Windows 95 or Windows 98?", "Windows 95.", "98 had USB support"),
        ("What's the chemical symbol for iron?", "Fe, from the Latin ferrum.", "Cu is copper"),
        ("List the colors of the French flag", "Blue, white, red.", "Italy's is green, white, red"),
        ("Is Python's dict ordered?", "Yes, since 3.7 insertion order is preserved.", "sets still aren't"),
        ("Is Python's sort stable?", "Yes — Timsort is stable.", "It wasn't in Python 2"),
        ("What's the largest lake in Africa?", "Lake Victoria.", "Shared by three countries"),
        ("What's the unit of frequency?", "The hertz (Hz).", "Named after Heinrich Hertz"),
        ("Which ocean is the Bermuda Triangle in?", "The Atlantic.", "Spooky stuff"),
        ("Which is bigger, a liter or a quart?", "A liter, slightly.", "Barely"),
        ("What's the weather in London?", "I can't check live weather.", "Probably raining"),
        ("What's the capital of Norway?", "Oslo.", "Hmm, Stockholm next?"),
        ("What does `ls -a` do?", "It lists all files, including hidden ones.", "It shows dotfiles"),
        ("What does `git pull` do?", "It fetches and merges.", "it rebases with --rebase"),
        ("What does `return` do?", "It exits the function and hands back a value.", "Without a value it returns None"),
        ("What's the capital of Australia?", "Canberra.", "Not Sydney, noted"),
        ("Who was the first emperor of Rome?", "Augustus.", "Caesar was a dictator, not emperor"),
        ("What does len() return for an empty list?", "0.", "and for None it raises TypeError"),
        ("How many strings does a cello have?", "Four.", "I believe a double bass has four too"),
        ("How do I undo in vim?", "Press u.", "Ctrl-r to redo"),
        ("What's the smallest prime number?", "2.", "It's the only even one"),
    ],
)  # fmt: skip
def test_look_alikes_of_the_new_shapes_are_not_corrections(prior: str, reply: str, follow_up: str) -> None:
    assert not classify_user_correction(prior, follow_up, reply).is_correction


@pytest.mark.parametrize(
    ("prior", "reply", "follow_up", "cue"),
    [
        ("How do I get the length of a string in JavaScript?", "Use `str.length()`.", "no parentheses", "syntax"),
        ("Fix my loop: for i in range(10) print(i)", "for i in range(10) print(i);", "missing the colon", "syntax"),
        ("Write a palindrome check ignoring case", "def is_pal(s): return s == s[::-1]",
         "'Racecar' returns False with that", "empty_result"),
        ("What's the plural of 'cactus'?", "'Cactuses' is the only correct plural.", "I think cacti is fine too?",
         "also_valid"),
        ("Which planet has rings?", "Only Saturn has rings.", "Jupiter, Uranus and Neptune have rings too",
         "also_valid"),
        ("What's the year in JS?", "new Date().getYear()", "use getFullYear()", "replacement"),
        ("Give me a one-word synonym for 'big'", "Very large.", "one word please", "restated_constraint"),
    ],
)  # fmt: skip
def test_reply_aware_cues(prior: str, reply: str, follow_up: str, cue: str) -> None:
    _, hits = score_cues(follow_up, reply, on_topic=True, prior_request=prior)
    assert cue in {h.name for h in hits}


def test_reply_aware_cues_need_the_reply_to_differ() -> None:
    # "no parentheses" where the reply has none; "returns None" where the reply said so; no "only" claimed.
    assert "syntax" not in _cue_names("Get a string's length in JS", "str.length", "no parentheses")
    assert "empty_result" not in _cue_names("What does d.get return?", "d.get(k) returns None", "it returns None")
    assert "also_valid" not in _cue_names("Plural of cactus?", "Cacti or cactuses.", "cactuses is fine too")


def _cue_names(prior: str, reply: str, follow_up: str) -> set[str]:
    return {h.name for h in score_cues(follow_up, reply, on_topic=True, prior_request=prior)[1]}


def test_weak_shapes_need_company() -> None:
    # The reply's answer said of something else, or a claim about it: as likely a remark; together, a correction.
    alone = contradiction("404 is not found", "What does HTTP 403 mean?", "403 means Not Found.")
    assert alone is not None and alone.weight == WEAK
    claim = contradiction("Ag is silver", "What's the chemical symbol for gold?", "Gold's symbol is Ag.")
    assert claim is not None and claim.weight == WEAK
    both = contradiction("Ag is silver. Au", "What's the chemical symbol for gold?", "Gold's symbol is Ag.")
    assert both is not None and both.weight == STRONG


def test_exchange_facts() -> None:
    # A four-digit number is a year only where the exchange is about time; a bare reply's number is its answer.
    assert number_kinds("1000", about_time=False) == {"quantity"} and number_kinds("1912", about_time=True) == {"year"}
    assert number_kinds("came out in 2010", about_time=False) == {"year"}
    tip = exchange(normalize("What's a 15% tip on $80?"), normalize("A 15% tip on $80 is $15."), "")
    assert tip.reply_numbers == {15.0}
    assert exchange(normalize("What's 10 % 3?"), "3", "3").reply_numbers == {3.0}
    choice = exchange(normalize("Which is denser, ice or water?"), normalize("Ice is denser than water."), "")
    assert choice.options == ({"ice"}, {"water"}) and choice.chosen == {"ice"}
    assert exchange(normalize("Is 0 even?"), normalize("No, 0 is odd."), "").reply_polarity == -1
    assert numbers("utf-8") == set() and numbers("the only even one") == set() and numbers("one moon") == {1.0}
    assert [case_shape(t) for t in ("COUNTA", "getFullYear", "Paris", "ohms")] == ["upper", "camel", "capital", "lower"]


def test_roundings_and_workings_agree_with_the_reply() -> None:
    assert _rounds(300_000, 299_792) and _rounds(2.5, 2.54)
    assert not _rounds(10, 8) and not _rounds(86_400, 84_600) and not _rounds(3.142, 3.141)
    assert classify_user_correction("Compute 2^10", "1024", "2^10 = 1000").is_correction  # exact, not rounded
    assert _arithmetic("60 times 60") == 3600 and _arithmetic("24*60") == 1440 and _arithmetic("sixty") is None


@pytest.mark.parametrize(
    "follow_up",
    ["Isn't it " + "x" * 5000 + "?", "1, " * 3000, "it's " * 2000, "a " * 17 + "?" * 5000, "-" * 10_000 + " is 5"],
)
def test_new_paths_stay_cheap(follow_up: str) -> None:
    start = time.perf_counter()
    classify_user_correction("Which is denser, ice or water? " * 200, follow_up, "1, 2, 3, " * 5000)
    assert time.perf_counter() - start < 0.25
