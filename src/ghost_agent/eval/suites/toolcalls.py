"""A function-calling set: requests a client sends with `tools`, each with the exact call it should produce.

Twelve function schemas of the kinds chat clients register (weather, currency, calendar, flights, timers,
email, stocks, translation, tips, to-dos, time zones, restaurants). Each request offers its target function
and two others, so choosing the function is part of the task. Expected arguments are exact for the fields a
request determines (numbers compared as numbers, strings case- and space-insensitively, dates as given);
`ANY` marks free-text fields (an email body) where any non-empty string is right. Two requests expect two
calls (parallel). Used by `bench/bench_tool_calls.py`; written for this project, not taken from a benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ghost_agent.jsonsafe import JSON

ANY = "<any non-empty>"


def _fn(name: str, description: str, properties: JSON, required: list[str]) -> JSON:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


FUNCTIONS: dict[str, JSON] = {f["function"]["name"]: f for f in [
    _fn("get_weather", "Current weather for a city.",
        {"city": {"type": "string", "description": "City name"},
         "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, ["city"]),
    _fn("convert_currency", "Convert an amount of money between currencies.",
        {"amount": {"type": "number"}, "from_currency": {"type": "string", "description": "ISO 4217 code, e.g. USD"},
         "to_currency": {"type": "string", "description": "ISO 4217 code, e.g. EUR"}},
        ["amount", "from_currency", "to_currency"]),
    _fn("create_event", "Add an event to the user's calendar.",
        {"title": {"type": "string"}, "date": {"type": "string", "description": "YYYY-MM-DD"},
         "time": {"type": "string", "description": "24-hour HH:MM"}}, ["title", "date", "time"]),
    _fn("search_flights", "Search flights between two airports on a date.",
        {"origin": {"type": "string", "description": "IATA airport code"},
         "destination": {"type": "string", "description": "IATA airport code"},
         "date": {"type": "string", "description": "YYYY-MM-DD"}}, ["origin", "destination", "date"]),
    _fn("set_timer", "Start a countdown timer.",
        {"minutes": {"type": "integer", "minimum": 1}}, ["minutes"]),
    _fn("send_email", "Send an email.",
        {"to": {"type": "string", "description": "Recipient address"}, "subject": {"type": "string"},
         "body": {"type": "string"}}, ["to", "subject", "body"]),
    _fn("get_stock_price", "Latest price of a stock.",
        {"symbol": {"type": "string", "description": "Ticker symbol, e.g. AAPL"}}, ["symbol"]),
    _fn("translate_text", "Translate text into another language.",
        {"text": {"type": "string"}, "target_language": {"type": "string", "description": "Language name"}},
        ["text", "target_language"]),
    _fn("calculate_tip", "Tip for a restaurant bill.",
        {"bill_amount": {"type": "number"}, "tip_percent": {"type": "number"}}, ["bill_amount", "tip_percent"]),
    _fn("add_todo", "Add a task to the to-do list.",
        {"task": {"type": "string"}, "priority": {"type": "string", "enum": ["low", "medium", "high"]}},
        ["task", "priority"]),
    _fn("get_time", "Current local time in a time zone.",
        {"timezone": {"type": "string", "description": "IANA time zone, e.g. Europe/Paris"}}, ["timezone"]),
    _fn("book_table", "Reserve a table at a restaurant.",
        {"restaurant": {"type": "string"}, "party_size": {"type": "integer", "minimum": 1},
         "time": {"type": "string", "description": "24-hour HH:MM"}}, ["restaurant", "party_size", "time"]),
]}
NAMES = list(FUNCTIONS)


@dataclass(frozen=True)
class CallTask:
    id: str
    request: str
    expected: tuple[tuple[str, JSON], ...]  # (function name, expected arguments) per call, in order

    @property
    def tools(self) -> list[JSON]:
        """The target function(s) and two others (a fixed, per-task choice)."""
        targets = [name for name, _ in self.expected]
        start = (sum(map(ord, self.id)) + len(targets)) % len(NAMES)
        others = [n for n in NAMES[start:] + NAMES[:start] if n not in targets][:2]
        names = sorted(set(targets) | set(others), key=lambda n: (sum(map(ord, n + self.id)) % 7, n))
        return [FUNCTIONS[n] for n in names]


def _t(id: str, request: str, *calls: tuple[str, JSON]) -> CallTask:
    return CallTask(id, request, tuple(calls))


TASKS: list[CallTask] = [
    _t("weather-1", "What's the weather like in Lisbon right now?", ("get_weather", {"city": "Lisbon"})),
    _t("weather-2", "Is it cold in Toronto? Give me the temperature in fahrenheit.",
       ("get_weather", {"city": "Toronto", "unit": "fahrenheit"})),
    _t("weather-3", "Check the current weather in Nairobi in celsius please.",
       ("get_weather", {"city": "Nairobi", "unit": "celsius"})),
    _t("weather-4", "do I need an umbrella in Seattle today", ("get_weather", {"city": "Seattle"})),
    _t("weather-5", "Weather report for Osaka.", ("get_weather", {"city": "Osaka"})),
    _t("currency-1", "How much is 250 US dollars in euros?",
       ("convert_currency", {"amount": 250, "from_currency": "USD", "to_currency": "EUR"})),
    _t("currency-2", "Convert 1200 JPY to GBP.",
       ("convert_currency", {"amount": 1200, "from_currency": "JPY", "to_currency": "GBP"})),
    _t("currency-3", "I have 75.5 euros. What's that in Swiss francs (CHF)?",
       ("convert_currency", {"amount": 75.5, "from_currency": "EUR", "to_currency": "CHF"})),
    _t("currency-4", "convert 40 CAD into USD",
       ("convert_currency", {"amount": 40, "from_currency": "CAD", "to_currency": "USD"})),
    _t("currency-5", "What do 10,000 Indian rupees (INR) come to in US dollars?",
       ("convert_currency", {"amount": 10000, "from_currency": "INR", "to_currency": "USD"})),
    _t("event-1", "Put 'Dentist' on my calendar for 2026-12-03 at 09:30.",
       ("create_event", {"title": "Dentist", "date": "2026-12-03", "time": "09:30"})),
    _t("event-2", "Schedule a meeting titled Budget review on 2027-01-15 at 14:00.",
       ("create_event", {"title": "Budget review", "date": "2027-01-15", "time": "14:00"})),
    _t("event-3", "Add an event called Yoga class, date 2026-11-30, time 18:15.",
       ("create_event", {"title": "Yoga class", "date": "2026-11-30", "time": "18:15"})),
    _t("event-4", "Create a calendar entry 'Call mom' for 2026-12-24 at 20:00.",
       ("create_event", {"title": "Call mom", "date": "2026-12-24", "time": "20:00"})),
    _t("flight-1", "Find flights from JFK to LHR on 2026-12-20.",
       ("search_flights", {"origin": "JFK", "destination": "LHR", "date": "2026-12-20"})),
    _t("flight-2", "Search for a flight SFO -> NRT on 2027-02-01.",
       ("search_flights", {"origin": "SFO", "destination": "NRT", "date": "2027-02-01"})),
    _t("flight-3", "Any flights from CDG to BCN on 2026-12-05?",
       ("search_flights", {"origin": "CDG", "destination": "BCN", "date": "2026-12-05"})),
    _t("flight-4", "I need to fly from SYD to AKL on 2027-03-10, what's available?",
       ("search_flights", {"origin": "SYD", "destination": "AKL", "date": "2027-03-10"})),
    _t("timer-1", "Set a timer for 15 minutes.", ("set_timer", {"minutes": 15})),
    _t("timer-2", "Start a 3 minute timer for my tea.", ("set_timer", {"minutes": 3})),
    _t("timer-3", "Timer: 45 minutes please.", ("set_timer", {"minutes": 45})),
    _t("timer-4", "Remind me in an hour with a timer (60 minutes).", ("set_timer", {"minutes": 60})),
    _t("email-1", "Email bob@example.com with subject 'Lunch' and tell him I'm running 10 minutes late.",
       ("send_email", {"to": "bob@example.com", "subject": "Lunch", "body": ANY})),
    _t("email-2", "Send an email to hr@example.org, subject: Vacation request, asking for Dec 20-24 off.",
       ("send_email", {"to": "hr@example.org", "subject": "Vacation request", "body": ANY})),
    _t("email-3", "Write to ana@example.net with the subject 'Slides' saying the slides are attached.",
       ("send_email", {"to": "ana@example.net", "subject": "Slides", "body": ANY})),
    _t("email-4", "Send carlos@example.com an email titled Invoice 42 reminding him it is due Friday.",
       ("send_email", {"to": "carlos@example.com", "subject": "Invoice 42", "body": ANY})),
    _t("stock-1", "What's Apple's stock price? (ticker AAPL)", ("get_stock_price", {"symbol": "AAPL"})),
    _t("stock-2", "Price of MSFT right now?", ("get_stock_price", {"symbol": "MSFT"})),
    _t("stock-3", "How is NVDA trading?", ("get_stock_price", {"symbol": "NVDA"})),
    _t("stock-4", "Get me the latest quote for TSLA.", ("get_stock_price", {"symbol": "TSLA"})),
    _t("translate-1", "Translate 'good morning' into Spanish.",
       ("translate_text", {"text": "good morning", "target_language": "Spanish"})),
    _t("translate-2", "How do you say 'where is the station' in German? Use the translator.",
       ("translate_text", {"text": "where is the station", "target_language": "German"})),
    _t("translate-3", "Translate 'thank you very much' to Japanese.",
       ("translate_text", {"text": "thank you very much", "target_language": "Japanese"})),
    _t("translate-4", "Please translate the phrase 'see you tomorrow' into French.",
       ("translate_text", {"text": "see you tomorrow", "target_language": "French"})),
    _t("tip-1", "What's a 20% tip on an $85 bill?", ("calculate_tip", {"bill_amount": 85, "tip_percent": 20})),
    _t("tip-2", "Calculate the tip for a bill of 42.50 at 15 percent.",
       ("calculate_tip", {"bill_amount": 42.5, "tip_percent": 15})),
    _t("tip-3", "Our dinner was 130 dollars, we want to tip 18%.",
       ("calculate_tip", {"bill_amount": 130, "tip_percent": 18})),
    _t("tip-4", "tip of 10 percent on 64", ("calculate_tip", {"bill_amount": 64, "tip_percent": 10})),
    _t("todo-1", "Add 'buy milk' to my to-do list, low priority.",
       ("add_todo", {"task": "buy milk", "priority": "low"})),
    _t("todo-2", "New high priority task: file the tax return.",
       ("add_todo", {"task": "file the tax return", "priority": "high"})),
    _t("todo-3", "Put 'renew passport' on my todo list with medium priority.",
       ("add_todo", {"task": "renew passport", "priority": "medium"})),
    _t("todo-4", "Add a task to water the plants, priority low.",
       ("add_todo", {"task": "water the plants", "priority": "low"})),
    _t("time-1", "What time is it in Tokyo? (Asia/Tokyo)", ("get_time", {"timezone": "Asia/Tokyo"})),
    _t("time-2", "Current time in the America/New_York time zone?", ("get_time", {"timezone": "America/New_York"})),
    _t("time-3", "What's the local time in Europe/Berlin?", ("get_time", {"timezone": "Europe/Berlin"})),
    _t("time-4", "Tell me the time in Australia/Sydney.", ("get_time", {"timezone": "Australia/Sydney"})),
    _t("table-1", "Book a table for 4 at Luigi's at 19:30.",
       ("book_table", {"restaurant": "Luigi's", "party_size": 4, "time": "19:30"})),
    _t("table-2", "Reserve Sakura Sushi for two people at 20:00.",
       ("book_table", {"restaurant": "Sakura Sushi", "party_size": 2, "time": "20:00"})),
    _t("table-3", "Get us a table at The Green Fork, party of 6, 18:45.",
       ("book_table", {"restaurant": "The Green Fork", "party_size": 6, "time": "18:45"})),
    _t("table-4", "Can you reserve a table at Casa Pepe for 3 at 21:00?",
       ("book_table", {"restaurant": "Casa Pepe", "party_size": 3, "time": "21:00"})),
    _t("parallel-1", "What's the weather in Rome and in Madrid?",
       ("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Madrid"})),
    _t("parallel-2", "Get the stock prices of AMZN and GOOG.",
       ("get_stock_price", {"symbol": "AMZN"}), ("get_stock_price", {"symbol": "GOOG"})),
    _t("mixed-1", "Set a 25 minute timer for the pizza.", ("set_timer", {"minutes": 25})),
    _t("mixed-2", "I'm in Paris, what's the weather in celsius?",
       ("get_weather", {"city": "Paris", "unit": "celsius"})),
    _t("mixed-3", "Convert 99 GBP to USD for me.",
       ("convert_currency", {"amount": 99, "from_currency": "GBP", "to_currency": "USD"})),
]


def _same(expected: Any, actual: Any) -> bool:
    if expected == ANY:
        return isinstance(actual, str) and bool(actual.strip())
    if isinstance(expected, bool) or isinstance(actual, bool):
        return bool(expected == actual)
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return abs(float(expected) - float(actual)) < 1e-9
    if isinstance(expected, (int, float)) and isinstance(actual, str):
        try:
            return abs(float(expected) - float(actual.replace(",", ""))) < 1e-9
        except ValueError:
            return False
    if isinstance(expected, str) and isinstance(actual, str):
        return " ".join(expected.lower().split()) == " ".join(actual.lower().strip(" '\"").split())
    return bool(expected == actual)


def call_matches(expected: tuple[str, JSON], name: str, arguments: JSON) -> bool:
    """The call has the expected function and, for every expected argument, the expected value (extra optional
    arguments the request did not determine are allowed only when the schema defines them)."""
    want_name, want_args = expected
    if name != want_name or not isinstance(arguments, dict):
        return False
    props = FUNCTIONS[want_name]["function"]["parameters"]["properties"]
    if any(key not in props for key in arguments):
        return False
    return all(key in arguments and _same(value, arguments[key]) for key, value in want_args.items())


def calls_match(task: CallTask, calls: list[tuple[str, JSON]]) -> bool:
    """Exactly the expected calls (order-insensitive for parallel calls)."""
    if len(calls) != len(task.expected):
        return False
    remaining = list(calls)
    for expected in task.expected:
        hit = next((c for c in remaining if call_matches(expected, c[0], c[1])), None)
        if hit is None:
            return False
        remaining.remove(hit)
    return True
