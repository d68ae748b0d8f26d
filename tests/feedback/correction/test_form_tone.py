"""The signals added after batch f: form and count constraints the reply broke (`user_correction_form`), how a
correction is said when it is not said plainly — sarcasm, shouting, a subjectless "forgot …", a polite "I don't
think X does that", a piece of the reply's code said never to work (`user_correction_tone`) — and thanks in any
language, which never alarms.

Development cases: written in scratch rounds while these signals were built (first-run figures in
`tests/feedback/correction/data/README.md`). None is from the labelled set.
"""

from __future__ import annotations

import time

import pytest

from ghost_agent.feedback.correction.cues import normalize
from ghost_agent.feedback.correction.detector import classify_user_correction
from ghost_agent.feedback.correction.exchange import exchange
from ghost_agent.feedback.correction.form import _count_constraint, _items, _reply_has_unit, _sentences
from ghost_agent.feedback.correction.score import score_cues
from ghost_agent.feedback.correction.tone import only_thanks
from ghost_agent.feedback.correction.values import converted


@pytest.mark.parametrize(
    ("prior", "reply", "follow_up", "cue"),
    [
        # a form the request asked for and the reply lacks, asked for again
        ("Show me the quarterly sales as a table: Q1 10k, Q2 12k, Q3 9k, Q4 15k",
         "Sales were 10k in Q1, rising to 12k in Q2, dipping to 9k in Q3 and peaking at 15k in Q4.", "table please",
         "form_wish"),
        ("Give me the agenda as bullet points: intro, budget review, hiring, AOB",
         "The meeting will open with an introduction, move on to the budget, then hiring, and close with AOB.",
         "can I get that as bullets", "form_wish"),
        ("Return the config as YAML: name app, port 8080, debug true", '{"name": "app", "port": 8080}',
         "yaml, not json", "form_wish"),
        ("Give me the meeting time in 24h format: half past three in the afternoon", "3:30 PM", "24h format please",
         "form_wish"),
        ("Rename this variable to snake_case: userAccountId", "userAccountID", "snake_case pls", "form_wish"),
        ("Express 3/8 as a percentage", "0.375", "as a percentage please", "form_wish"),
        ("How heavy is a gallon of milk, in kg?", "A gallon of milk weighs about 8.6 pounds.", "in kg!", "form_wish"),
        ("How far is the Moon in km?", "About 384,400 miles.", "384,400 km", "form_wish"),
        # a count the request asked for and the reply broke: asked again, or the reply's own count stated
        ("Describe photosynthesis in one sentence",
         "Photosynthesis is how plants make food. They use sunlight and water. Oxygen is a by-product.",
         "one sentence", "form_wish"),
        ("Give me a 5 letter word meaning happy", "Cheerful", "5 letters please", "form_wish"),
        ("Suggest 3 names for a bakery", "1. Rise & Shine\n2. The Daily Crumb\n3. Flour Power\n4. Knead to Know",
         "that's 4 names", "form_wish"),
        ("Give me two tips for sleeping better", "1. Keep a schedule.\n2. Avoid screens.\n3. Cut caffeine.",
         "that's three", "form_wish"),
        ("Round 3.14159 to 2 decimal places", "3.142", "2 decimal places, so 3.14", "form_wish"),
        ("Write a loop in Python that prints 1 to 10", "for i in range(1, 10):\n    print(i)", "that stops at 9",
         "form_wish"),
        # sarcasm
        ("What's the capital of Canada?", "The capital of Canada is Toronto.",
         "Toronto is the capital now? since when?", "sarcasm"),
        ("How do I undo my last commit but keep the changes?", "Run `git reset --hard HEAD~1`.",
         "oh great, now I lost all my changes. thanks a lot", "sarcasm"),
        ("Give me a vegan pancake recipe", "Whisk 2 eggs with 200 ml milk and 150 g flour.",
         "eggs and milk, very vegan, thanks for nothing", "sarcasm"),
        ("Is a tomato a fruit?", "No, a tomato is a vegetable.", "lol sure, tell that to a botanist", "sarcasm"),
        ("Best way to store passwords?", "Encrypt them with AES so you can decrypt them at login.",
         "great idea, reversible passwords, what could go wrong. they should be hashed", "sarcasm"),
        # the request's word shouted; an omission without "you"; the reply's element doubted or faulted
        ("Give me the list sorted from smallest to largest: 5, 2, 9", "9, 5, 2", "SMALLEST first", "shouted"),
        ("Write a bash script that backs up /etc and compresses it", "cp -r /etc /backup/etc", "forgot to compress it",
         "omission"),
        ("Give me a packing list for skiing, and include goggles", "- Jacket\n- Gloves\n- Helmet",
         "left out the goggles", "omission"),
        ("Write a SQL query that counts orders per customer", "SELECT customer_id FROM orders;",
         "where's the COUNT and GROUP BY?", "omission"),
        ("What does the -f flag do in `tail -f`?", "It shows the first lines of the file.", "not what -f does",
         "not_what_it_does"),
        ("How do I make a div fill the screen height?", "Use `height: 100%` on the div.",
         "I don't think height: 100% works unless the parent has a height", "doubted_element"),
        ("In JavaScript how do I check for NaN?", "Use `x === NaN`.", "x === NaN is always false", "faulted_code"),
        ("How do I read a file line by line in Python?", "Use `f.readlines(1)` in a loop.",
         "readlines(1) isn't how you do it, just iterate", "faulted_code"),
        ("Set my alarm for 6:30 am", "Alarm set for 6:30 pm.", "AM not PM!!", "swapped_term"),
        ("What's the chemical formula of table salt?", "NaCl2", "NaCl2, really? sodium is +1", "doubted_echo"),
        ("Correct the grammar: 'Me and him goes to school'", "Me and him go to school.",
         "should be 'He and I go to school'", "should_be_quoted"),
    ],
)  # fmt: skip
def test_corrections_the_new_signals_catch(prior: str, reply: str, follow_up: str, cue: str) -> None:
    _, hits = score_cues(follow_up, reply, on_topic=True, prior_request=prior)
    assert cue in {h.name for h in hits}, hits
    assert classify_user_correction(prior, follow_up, reply).is_correction


@pytest.mark.parametrize(
    ("prior", "reply", "follow_up"),
    [
        # by counter-statement: a comparison by a factor, a past tense for a name, a command, a reaction closing it
        ("Which is longer, the Nile or the Thames?", "The Thames is longer than the Nile.",
         "the Nile is about 19 times the length of the Thames"),
        ("Who painted the Mona Lisa?", "Michelangelo painted the Mona Lisa around 1503.", "Leonardo did"),
        ("How do I uninstall a pip package?", "pip remove package_name", "it's pip uninstall"),
        ("What's the plural of 'mouse' (the animal)?", "Mouses.", "mice, obviously"),
        ("What's the derivative of x^3?", "x^2", "3x^2"),
        ("When did the Titanic sink?", "It sank on April 15, 1915, after hitting an iceberg.", "1912"),
        ("Translate 'thank you' to German", "Bitte.", "bitte means please. it's danke"),
    ],
)  # fmt: skip
def test_counter_statements_fixed_in_this_round(prior: str, reply: str, follow_up: str) -> None:
    assert classify_user_correction(prior, follow_up, reply).is_correction


@pytest.mark.parametrize(
    ("prior", "reply", "follow_up"),
    [
        # a form wished for where the request never named it, or the reply already has it: a new wish or praise
        ("What are the planets of the solar system?", "Mercury, Venus, Earth, Mars, Jupiter, Saturn, Uranus, Neptune.",
         "as a numbered list please"),
        ("Compare cats and dogs as pets", "Cats are independent; dogs need more exercise.",
         "can you put that in a table?"),
        ("How far is Paris from Lyon?", "About 465 km by road.", "in miles please"),
        ("Give me the config for my app", "name: app\nport: 8080", "now as JSON too"),
        ("Write a JSON parser in Python", "import json\ndef parse(s):\n    return json.loads(s)",
         "can it handle nested JSON?"),
        ("Give me the tasks as a numbered list: email, gym, groceries", "1. Email\n2. Gym\n3. Groceries",
         "numbered is great, thanks"),
        ("Summarise the film Up in one sentence", "An old man flies his house to South America.", "one sentence, nice"),
        ("Give me 3 names for a cat", "Milo, Luna, Oliver", "3 more please"),
        ("Explain recursion in one sentence", "Recursion is a function calling itself on smaller pieces.",
         "now in two sentences for kids"),
        ("Write a loop that prints 1 to 10 in Python", "for i in range(1, 11):\n    print(i)",
         "it stops at 10, perfect"),
        ("Give me 3 fun facts about octopuses", "1. Three hearts.\n2. Blue blood.\n3. They taste with their arms.",
         "wow, 3 hearts"),
        # sarcasm look-alikes: genuine thanks, praise, surprise, a question
        ("How do I reverse a list in Python?", "Use `lst[::-1]`.", "oh nice, that's clever. thanks a lot"),
        ("How do I fix the merge conflict?", "Edit the file, remove the markers, then add and commit.",
         "oh great, now it works"),
        ("Write a regex for a 5-digit zip", "^\\d{5}$", "wow, genius!"),
        ("Tell me a joke", "Why did the scarecrow win an award? He was outstanding in his field.", "lol, genius"),
        ("How many moons does Mars have?", "Two: Phobos and Deimos.",
         "Mars has moons now? I genuinely didn't know, cool"),
        ("Is coffee bad for you?", "In moderation it's fine.", "since when is coffee healthy? good news for me"),
        ("What's a good name for a golden retriever?", "Sunny, Maple or Biscuit.", "oh sure, and maybe Honey too"),
        ("What could go wrong with async code?", "Races and unawaited coroutines.",
         "What could go wrong if I forget to await a coroutine?"),
        # shouting an acronym or a new word; the user's own "forgot"; a doubt about the user's own setup
        ("Give me a SQL query to count users", "SELECT COUNT(*) FROM users;", "nice. now only the ACTIVE ones"),
        ("Scale this recipe down to 2 servings: 400 g rice for 4", "200 g rice for 2 servings.",
         "great, now UP to 8 for the party"),
        ("How do I list files in Linux?", "`ls` lists them.", "forgot to mention, I'm on a Mac"),
        ("How do I reset my router password?", "Hold reset for 10 seconds, then use the default password.",
         "forgot the password again, story of my life"),
        ("How do I make pancakes fluffy?", "Don't overmix, and let the batter rest.",
         "where's the baking powder in this? do I need it"),
        ("How do I make my Flask app use HTTPS?", "Put it behind nginx with a Let's Encrypt certificate.",
         "I don't think nginx is installed on the box, can I do it without?"),
        ("How do I deploy to Heroku?", "Push with `git push heroku main`.", "I don't think I need that, we use Render"),
        ("Give me a regex for digits", "\\d+", "\\d+ is never going to match letters, right? just checking"),
        ("What does git rebase do?", "It replays your commits on top of another base.", "not what I expected, but ok"),
        # the reply's figure converted or compared by a factor that agrees with it; the user's own setup
        ("How tall is the Eiffel Tower?", "About 330 m.", "that's about 1,083 feet"),
        ("Which is bigger, an elephant or a mouse?", "An elephant, by far.",
         "an elephant is about 100,000 times the weight of a mouse"),
        ("What's the tallest building?", "The Burj Khalifa, at 828 m.",
         "The Burj Khalifa is almost twice the height of the Empire State Building"),
        ("How do I take a screenshot on Windows?", "Press Win+Shift+S.", "I'm on a Mac actually"),
        ("How do I check Python's version?", "Run `python --version`.", "It says 3.12.1"),
    ],
)  # fmt: skip
def test_look_alikes_are_not_corrections(prior: str, reply: str, follow_up: str) -> None:
    assert not classify_user_correction(prior, follow_up, reply).is_correction


@pytest.mark.parametrize(
    "thanks",
    ["danke!", "danke schön", "Vielen Dank!", "merci", "merci beaucoup!", "gracias", "muchas gracias",
     "grazie mille 🙏", "obrigado", "obrigada!!", "arigato", "arigatou gozaimasu", "domo arigato", "spasibo",
     "спасибо!", "спасибо большое", "dziękuję", "dzięki", "tack så mycket!", "takk", "bedankt!", "kiitos paljon",
     "teşekkürler", "köszönöm", "děkuji", "mahalo", "shukran", "toda", "xie xie", "谢谢！", "ありがとう",
     "감사합니다", "dhanyavaad", "asante sana", "cheers", "thx", "ty!!", "thank you so much"],
)  # fmt: skip
def test_thanks_in_any_language_never_alarms(thanks: str) -> None:
    assert only_thanks(thanks)
    for prior, reply in (
        ("What's the German word for 'kitchen'?", "Küche — it's feminine, so 'die Küche'."),
        ("How do you say 'thank you' in German?", "Bitte."),
        ("What's 13 × 13?", "13 × 13 = 159"),
    ):
        assert not classify_user_correction(prior, thanks, reply).is_correction


def test_thanks_in_another_language_is_praise_inside_a_message_too() -> None:
    assert not classify_user_correction("Italian for 'cat'?", "Gatto.", "Grazie! gatto è carino").is_correction
    assert not classify_user_correction("Spanish for library?", "Biblioteca.", "gracias, muy útil").is_correction
    assert not only_thanks("danke, aber das ist falsch") and not only_thanks("merci, but that means cat")


def test_what_the_reply_looks_like() -> None:
    assert _count_constraint(normalize("Give me a one-word antonym of 'ancient'")) == ("word", 1, False)
    assert _count_constraint(normalize("Give me a 3 letter word for a feline")) == ("letter", 3, False)
    assert _count_constraint(normalize("Summarise it in under 20 words")) == ("word", 20, True)
    assert _count_constraint(normalize("Give me 3 bullet points on testing")) == ("item", 3, False)
    assert _count_constraint(normalize("What's a good word for happy?")) is None
    assert _items("France, Germany and Spain") == 3 and _items("- a\n- b\n- c\n- d") == 4
    assert _items("Renting is flexible, buying builds equity, and both cost money over many years of your life.") == 3
    assert _sentences("Dr. Smith came. He left! Then? Yes.") == 4 and _sentences("- one.\n- two.") is None
    assert _reply_has_unit(["km", "kilometre"], "about 195 km") and not _reply_has_unit(["km"], "about 195 miles")
    assert _reply_has_unit(["celsius", "\u00b0c", "c"], "it is 20 c") and not _reply_has_unit(["c"], "plan c")


def test_a_figure_converted_to_another_unit_restates_the_answer() -> None:
    tower = exchange(normalize("How tall is the Eiffel Tower?"), normalize("About 330 m."), "About 330 m.")
    assert converted("about 1,083 feet", tower) and not converted("about 1,500 feet", tower)
    boil = exchange(normalize("Boiling point of water?"), normalize("100 °C."), "100 °C.")
    assert converted("212 \u00b0f", boil) and not converted("100 \u00b0f", boil)
    # the request's own figure, repeated in the reply, is no answer to convert: "≈27.8 m/s" still disputes "360 m/s"
    speed = exchange(normalize("Convert 100 km/h to m/s"), normalize("100 km/h is 360 m/s."), "100 km/h is 360 m/s.")
    assert not converted("27.8 m/s", speed)


@pytest.mark.parametrize(
    "follow_up",
    ["bullets " * 3000, "1 " * 5000, "oh sure, and " + "x " * 3000 + "thanks a lot", ", genius, " * 2000,
     "DOWN " * 3000 + "down", "forgot to " + "make " * 3000, "x now? " * 2000, "danke " * 5000],
)  # fmt: skip
def test_new_paths_stay_cheap(follow_up: str) -> None:
    start = time.perf_counter()
    classify_user_correction("Give me 3 bullet points, 1 to 10, in km, as JSON " * 50, follow_up, "- a\n" * 3000)
    assert time.perf_counter() - start < 0.25
