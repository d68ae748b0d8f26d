"""The stated preference inside a correcting message: the user's words, without the cue and the rephrase."""

from __future__ import annotations

import pytest

from ghost_agent.memory.preference import (
    MAX_CHARS,
    preference_solution,
    preference_text,
    stated_preference,
)


@pytest.mark.parametrize(
    ("request_text", "correction", "expected"),
    [
        # cue + preference + rephrase: only the preference stays
        ("What is the boiling point of ethanol?",
         "No, I work in kelvin. What is the boiling point of ethanol?", "I work in kelvin."),
        # a dash separates the cue; a colon inside the preference does not split it
        ("Name a folder for the quarterly tax receipts.",
         "Not like that — folders here are snake_case: lowercase with underscores. Name the folder again.",
         "Folders here are snake_case: lowercase with underscores."),
        # a complaint sentence only rejects: dropped
        ("Write the changelog entry for the login fix.",
         "That's not how we write them. Changelog entries start with the ticket number. Write it again.",
         "Changelog entries start with the ticket number."),
        # a complaint clause goes up to its comma; the counter-statement stays
        ("What is 17 times 23?", "That's wrong, 17*23 is 391", "17*23 is 391"),
        # a plain counter-statement sharing the subject is not a rephrase (it is a statement, not a request)
        ("What is the time complexity of binary search?",
         "That is not right. Binary search is logarithmic.", "Binary search is logarithmic."),
        ("what's the capital of australia", "No. It's Canberra.", "It's Canberra."),
        ("List the planets", "wrong format, I need JSON", "I need JSON"),
    ],
)
def test_the_preference_is_the_users_words_without_cue_or_rephrase(
    request_text: str, correction: str, expected: str
) -> None:
    assert stated_preference(request_text, correction) == expected


@pytest.mark.parametrize(
    ("request_text", "correction"),
    [
        ("Reply with three words exactly: kangaroo trampoline lighthouse",
         "no, reply with three words exactly: kangaroo trampoline metronome"),  # only a rephrase: instance-bound
        ("Translate hello into German", "No, that's wrong. Translate hello into German again."),
        ("Summarise this", "this is just wrong"),
        ("Summarise this", "   "),
        ("Summarise this", None),
    ],
)
def test_a_correction_that_only_rejects_or_rephrases_has_no_preference(
    request_text: str, correction: str | None
) -> None:
    assert stated_preference(request_text, correction) is None


def test_a_long_message_is_a_new_request_not_a_preference() -> None:
    long = "No, I want " + " ".join(f"word{i}" for i in range(80)) + "."
    assert len(long) > MAX_CHARS
    assert stated_preference("Write a poem", long) is None


def test_the_solution_quotes_the_preference_and_reads_back() -> None:
    solution = preference_solution('Dates as DD/MM/YYYY, "always".')
    assert preference_text(solution) == 'Dates as DD/MM/YYYY, "always".'
    assert preference_text("Reply with exactly the requested words.") is None


def test_a_stated_preference_is_found_by_its_own_words_and_weak_words_relate_nothing(tmp_path) -> None:
    from ghost_agent.memory.store import SkillMemory

    with SkillMemory(tmp_path / "lessons.db") as memory:
        pref = memory.learn_lesson("requests like: When is Christmas Day in 2025?", "",
                                   preference_solution("I write dates as DD/MM/YYYY."), session_id="s",
                                   source="preference").lesson
        critique = memory.learn_lesson("writing dates in a travel plan", "", "Write dates with the weekday.",
                                       session_id="s", source="reflection").lesson
        long_request = "My passport expires on the 14th of August 2027. Write that date for a form."
        # one topical word of seven: only the preference, counted by its own words, clears the floor
        assert [h.lesson.id for h in memory.search(long_request, session="s")] == [pref.id]
        # "write" alone relates nothing, to either lesson
        assert memory.search("Write a haiku about the sea.", session="s") == []
        assert {h.lesson.id for h in memory.search("Which date is Easter?", session="s")} == {pref.id, critique.id}
