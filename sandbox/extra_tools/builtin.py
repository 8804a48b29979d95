"""The built-in out-of-domain registry: 48 tools a general agent framework would also offer (code execution,
terminal and files, web browsing, calendar and booking, retail orders, weather, maps, math, email, …).

The general-agent setting of the scaling study (arXiv 2602.18998 §2.2, App. B.8) hands an agent every domain's
tools at once. None of these tools can help with an AgentHop item, by construction: a result is built only from
a hash of the tool's name and arguments and from fixed, domain-generic word lists, so it is the same on every
machine and run, looks like what such a tool returns, and never carries a word of any item, paper or option
(tests/test_extra_tools.py checks every tool's results against the built-in benchmark's texts). Arguments are
never echoed back: a query the agent typed (its question, say) does not come back as a "result".
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable

from sandbox.records import ToolSchema
from storage.json_types import JsonObject

Handler = Callable[[random.Random], str]

_CITIES = ("Lisbon", "Osaka", "Denver", "Nairobi", "Tallinn", "Porto Alegre", "Quebec City", "Adelaide")
_STREETS = ("Maple Avenue", "Harbour Road", "Station Street", "Elm Court", "Riverside Drive", "Market Lane")
_PEOPLE = ("Dana Ortiz", "Sam Whitfield", "Priya Raman", "Lee Novak", "Marta Kowal", "Jon Eriksen")
_PRODUCTS = (
    "stainless steel water bottle",
    "wireless earbuds",
    "yoga mat",
    "LED desk lamp",
    "running shoes",
    "ceramic mug set",
    "phone charger",
    "backpack",
)
_SITES = (
    "How to descale a kettle in five minutes",
    "Ten easy weeknight pasta recipes",
    "Beginner guide to houseplant care",
    "Best budget hiking boots this season",
    "How to reset a home router",
    "Packing list for a weekend city break",
    "Choosing a standing desk",
    "Tips for a quieter dishwasher",
)
_WEATHER = ("clear", "partly cloudy", "light rain", "overcast", "showers", "sunny intervals", "fog", "windy")
_FILES = ("README.md", "main.py", "config.yaml", "notes.txt", "Makefile", "requirements.txt", "data.csv", "app.js")


def _pick(rng: random.Random, pool: tuple[str, ...]) -> str:
    return pool[rng.randrange(len(pool))]


def _tests_outcome(rng: random.Random) -> str:
    """The run_tests tool's summary line (the passed count drawn first, then the skipped count and the time)."""
    passed = rng.randint(12, 340)
    return f"{passed} passed, 0 failed, {rng.randint(0, 3)} skipped in {rng.randint(1, 40)}.{rng.randint(0, 9)}s"


def _obj(properties: JsonObject, required: tuple[str, ...]) -> JsonObject:
    return {"type": "object", "properties": properties, "required": list(required)}


def _s(description: str) -> JsonObject:
    return {"type": "string", "description": description}


def _i(description: str) -> JsonObject:
    return {"type": "integer", "description": description}


def _n(description: str) -> JsonObject:
    return {"type": "number", "description": description}


# name → (description, parameters, result). Results draw only on the generator seeded from (name, arguments).
_TOOLS: dict[str, tuple[str, JsonObject, Handler]] = {
    # code execution
    "run_python": (
        "Execute a Python code snippet in an isolated sandbox and return its standard output and the "
        "value of the last expression.",
        _obj({"code": _s("The Python source to execute.")}, ("code",)),
        lambda r: f"Execution finished in {r.randint(3, 900)} ms.\nstdout: (empty)\nresult: {r.randint(0, 999)}",
    ),
    "run_javascript": (
        "Run a JavaScript snippet in a Node.js sandbox and return what it printed to the console.",
        _obj({"code": _s("The JavaScript source to run.")}, ("code",)),
        lambda r: f"Process exited with code 0 after {r.randint(5, 400)} ms.\nconsole: undefined",
    ),
    "run_sql": (
        "Run a read-only SQL query against the connected analytics warehouse and return the first rows.",
        _obj({"query": _s("The SQL statement."), "limit": _i("Maximum number of rows.")}, ("query",)),
        lambda r: f"Query returned 0 rows in {r.randint(8, 600)} ms (warehouse: analytics_prod).",
    ),
    "lint_code": (
        "Check a source file for style and syntax problems with the project's linter configuration.",
        _obj(
            {"path": _s("The file to lint."), "fix": {"type": "boolean", "description": "Apply safe fixes."}}, ("path",)
        ),
        lambda r: f"{r.randint(0, 6)} warning(s), 0 error(s). Line length limit: 100.",
    ),
    "run_tests": (
        "Run the project's unit tests, optionally only those matching a pattern, and summarise the outcome.",
        _obj({"pattern": _s("Only tests whose name matches.")}, ()),
        _tests_outcome,
    ),
    # terminal and files
    "bash": (
        "Run a shell command in the workspace terminal and return its exit status and output.",
        _obj(
            {"command": _s("The command line to run."), "timeout": _i("Seconds before the command is killed.")},
            ("command",),
        ),
        lambda r: f"exit status 0\n(no output; {r.randint(1, 90)} ms)",
    ),
    "read_file": (
        "Read a text file from the workspace and return its contents with line numbers.",
        _obj({"path": _s("Path relative to the workspace root.")}, ("path",)),
        lambda r: f"1  # {_pick(r, _FILES)}\n2  \n3  (file is {r.randint(3, 400)} lines; showing the first 2)",
    ),
    "write_file": (
        "Create or overwrite a text file in the workspace.",
        _obj(
            {"path": _s("Path relative to the workspace root."), "content": _s("The full new contents.")},
            ("path", "content"),
        ),
        lambda r: f"Wrote {r.randint(10, 4000)} bytes.",
    ),
    "list_directory": (
        "List the files and folders in a workspace directory with their sizes.",
        _obj({"path": _s("The directory (default: the workspace root).")}, ()),
        lambda r: "\n".join(f"{f}  {r.randint(1, 90)} KB" for f in r.sample(_FILES, 4)),
    ),
    "search_files": (
        "Search the workspace for files whose contents match a regular expression.",
        _obj({"pattern": _s("A regular expression."), "glob": _s("Only files matching this glob.")}, ("pattern",)),
        lambda r: f"{_pick(r, _FILES)}:{r.randint(1, 300)}: match\n1 file matched.",
    ),
    "git_status": (
        "Show the working tree status of the repository in the workspace.",
        _obj({}, ()),
        lambda r: f"On branch main\nYour branch is up to date with 'origin/main'.\n{r.randint(0, 4)} file(s) modified.",
    ),
    "git_log": (
        "Show the most recent commits of the repository with author, date and subject.",
        _obj({"limit": _i("How many commits to show.")}, ()),
        lambda r: f"{r.getrandbits(28):07x} {_pick(r, _PEOPLE)}  Update {_pick(r, _FILES)}",
    ),
    # web browsing
    "web_search": (
        "Search the web and return the top results with title, URL and snippet.",
        _obj({"query": _s("What to search for."), "num_results": _i("How many results (max 10).")}, ("query",)),
        lambda r: "\n".join(
            f"[{k}] {t}\n    https://www.{_pick(r, ('howto', 'dailytips', 'homeguide', 'lifehub'))}"
            f".com/{r.getrandbits(24):x}"
            for k, t in enumerate(r.sample(_SITES, 3), 1)
        ),
    ),
    "fetch_url": (
        "Download a web page and return its readable text.",
        _obj({"url": _s("The page address (http or https).")}, ("url",)),
        lambda r: f"HTTP 200 · {r.randint(2, 90)} KB\n{_pick(r, _SITES)}\nCookies help us deliver our services.",
    ),
    "browser_click": (
        "Click an element of the page open in the browser, by its CSS selector or visible label.",
        _obj({"selector": _s("CSS selector or visible text of the element.")}, ("selector",)),
        lambda r: f"Clicked. The page navigated to /{_pick(r, ('account', 'cart', 'help', 'home'))}.",
    ),
    "browser_type": (
        "Type text into a field of the page open in the browser.",
        _obj({"selector": _s("The input field."), "text": _s("What to type.")}, ("selector", "text")),
        lambda r: "Typed into the field.",
    ),
    "browser_screenshot": (
        "Take a screenshot of the browser window and describe what is visible.",
        _obj({}, ()),
        lambda r: f"Screenshot 1280x{r.choice((720, 800, 960))}: a page header, a search box and a cookie banner.",
    ),
    "browser_back": ("Go back to the previous page in the browser history.", _obj({}, ()), lambda r: "Navigated back."),
    # calendar and booking
    "list_calendar_events": (
        "List the events on the user's calendar between two dates.",
        _obj(
            {"start_date": _s("First day, YYYY-MM-DD."), "end_date": _s("Last day, YYYY-MM-DD.")},
            ("start_date", "end_date"),
        ),
        lambda r: f"{r.randint(0, 3)} event(s): Team stand-up 09:30, Dentist {r.randint(13, 17)}:00",
    ),
    "create_calendar_event": (
        "Create an event on the user's calendar and invite attendees.",
        _obj(
            {
                "title": _s("Event title."),
                "start": _s("Start, ISO 8601."),
                "duration_minutes": _i("Length in minutes."),
                "attendees": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "E-mail addresses to invite.",
                },
            },
            ("title", "start"),
        ),
        lambda r: f"Event created (id evt_{r.getrandbits(32):08x}).",
    ),
    "find_free_slot": (
        "Find the first time slot when every given person is free.",
        _obj(
            {
                "people": {"type": "array", "items": {"type": "string"}, "description": "E-mail addresses."},
                "duration_minutes": _i("Length of the slot."),
            },
            ("people",),
        ),
        lambda r: (
            f"First common free slot: next {_pick(r, ('Monday', 'Tuesday', 'Thursday'))} "
            f"{r.randint(9, 16)}:{_pick(r, ('00', '30'))}."
        ),
    ),
    "search_flights": (
        "Search for flights between two airports on a date, with prices.",
        _obj(
            {
                "origin": _s("IATA code of the departure airport."),
                "destination": _s("IATA code of the arrival airport."),
                "date": _s("YYYY-MM-DD."),
                "passengers": _i("Number of passengers."),
            },
            ("origin", "destination", "date"),
        ),
        lambda r: "\n".join(
            f"Flight {_pick(r, ('TP', 'LH', 'UA', 'NH'))}{r.randint(100, 999)}  "
            f"{r.randint(6, 21):02d}:{r.choice(('05', '25', '40'))}  EUR {r.randint(89, 640)}"
            for _ in range(3)
        ),
    ),
    "book_flight": (
        "Book a flight found by search_flights for the named passengers.",
        _obj(
            {
                "flight_id": _s("The flight code."),
                "passenger_names": {"type": "array", "items": {"type": "string"}, "description": "Full names."},
            },
            ("flight_id", "passenger_names"),
        ),
        lambda r: (
            f"Booking confirmed. Record locator {''.join(r.choice('ABCDEFGHJKLMNPQRSTUVWXYZ') for _ in range(6))}."
        ),
    ),
    "search_hotels": (
        "Search hotels in a city for given dates, with price per night and rating.",
        _obj(
            {"city": _s("City name."), "check_in": _s("YYYY-MM-DD."), "check_out": _s("YYYY-MM-DD.")},
            ("city", "check_in", "check_out"),
        ),
        lambda r: "\n".join(
            f"Hotel {_pick(r, ('Aurora', 'Central', 'Harbour View', 'Parkside'))}  "
            f"{r.randint(3, 5)}★  EUR {r.randint(60, 310)}/night"
            for _ in range(3)
        ),
    ),
    "book_restaurant": (
        "Reserve a table at a restaurant.",
        _obj(
            {
                "restaurant": _s("Restaurant name."),
                "time": _s("ISO 8601 date and time."),
                "party_size": _i("Number of guests."),
            },
            ("restaurant", "time", "party_size"),
        ),
        lambda r: f"Table reserved. Confirmation code R{r.randint(10000, 99999)}.",
    ),
    "cancel_booking": (
        "Cancel a flight, hotel or restaurant booking by its confirmation code.",
        _obj({"confirmation_code": _s("The code given when booking.")}, ("confirmation_code",)),
        lambda r: "The booking was cancelled. A refund, if any, takes 5–7 business days.",
    ),
    # retail orders
    "search_products": (
        "Search the store's catalogue and return matching products with price and stock.",
        _obj({"query": _s("Product keywords."), "max_price": _n("Highest price in USD.")}, ("query",)),
        lambda r: "\n".join(
            f"SKU-{r.randint(10000, 99999)}  {p}  ${r.randint(8, 120)}.99  in stock" for p in r.sample(_PRODUCTS, 3)
        ),
    ),
    "get_order_status": (
        "Look up an order's status, items and estimated delivery date.",
        _obj({"order_id": _s("The order number, e.g. #W1234567.")}, ("order_id",)),
        lambda r: (
            f"Status: {_pick(r, ('processing', 'shipped', 'delivered'))}. "
            f"1 item: {_pick(r, _PRODUCTS)}. Estimated delivery in {r.randint(1, 6)} day(s)."
        ),
    ),
    "cancel_order": (
        "Cancel an order that has not shipped yet, giving a reason.",
        _obj(
            {"order_id": _s("The order number."), "reason": _s("'no longer needed' or 'ordered by mistake'.")},
            ("order_id", "reason"),
        ),
        lambda r: "Order cancelled; the payment will be refunded to the original method.",
    ),
    "return_item": (
        "Start a return for delivered items of an order and choose the refund method.",
        _obj(
            {
                "order_id": _s("The order number."),
                "item_ids": {"type": "array", "items": {"type": "string"}, "description": "Items to return."},
                "payment_method_id": _s("Where the refund goes."),
            },
            ("order_id", "item_ids"),
        ),
        lambda r: f"Return requested. Print the label sent by e-mail (RMA {r.randint(100000, 999999)}).",
    ),
    "update_shipping_address": (
        "Change the shipping address of an order that has not shipped yet.",
        _obj({"order_id": _s("The order number."), "address": _s("The new full address.")}, ("order_id", "address")),
        lambda r: "Shipping address updated.",
    ),
    "get_user_details": (
        "Get a customer's profile: name, e-mail, saved addresses and payment methods.",
        _obj({"user_id": _s("The customer id.")}, ("user_id",)),
        lambda r: (
            f"Name: {_pick(r, _PEOPLE)}\nAddress: {r.randint(1, 400)} {_pick(r, _STREETS)}, "
            f"{_pick(r, _CITIES)}\nPayment methods: credit card ending {r.randint(1000, 9999)}"
        ),
    ),
    # weather
    "get_current_weather": (
        "Get the current weather conditions for a location.",
        _obj({"location": _s("City name or 'lat,lon'."), "units": _s("'metric' or 'imperial'.")}, ("location",)),
        lambda r: (
            f"{_pick(r, _WEATHER)}, {r.randint(-5, 34)}°C, humidity {r.randint(25, 95)}%, wind {r.randint(0, 40)} km/h"
        ),
    ),
    "get_weather_forecast": (
        "Get the daily weather forecast for the next days at a location.",
        _obj({"location": _s("City name or 'lat,lon'."), "days": _i("How many days (max 7).")}, ("location",)),
        lambda r: "\n".join(
            f"Day {d}: {_pick(r, _WEATHER)}, {low}–{low + r.randint(3, 12)}°C"
            for d, low in ((d, r.randint(-3, 24)) for d in range(1, 4))
        ),
    ),
    "get_air_quality": (
        "Get the air quality index and main pollutant at a location.",
        _obj({"location": _s("City name or 'lat,lon'.")}, ("location",)),
        lambda r: (
            f"AQI {r.randint(12, 160)} ({_pick(r, ('good', 'moderate', 'unhealthy for sensitive groups'))}); "
            f"main pollutant {_pick(r, ('PM2.5', 'ozone', 'NO2'))}"
        ),
    ),
    # maps
    "geocode_address": (
        "Convert a street address into latitude and longitude.",
        _obj({"address": _s("The address to locate.")}, ("address",)),
        lambda r: f"lat {r.uniform(-60, 60):.5f}, lon {r.uniform(-170, 170):.5f} (confidence {r.uniform(0.6, 1):.2f})",
    ),
    "get_directions": (
        "Get directions between two places by car, on foot, by bike or by public transport.",
        _obj(
            {
                "origin": _s("Start address or place."),
                "destination": _s("End address or place."),
                "mode": _s("driving, walking, cycling or transit."),
            },
            ("origin", "destination"),
        ),
        lambda r: (
            f"{r.uniform(0.4, 42):.1f} km, about {r.randint(4, 75)} min. Head north on "
            f"{_pick(r, _STREETS)}, then turn right onto {_pick(r, _STREETS)}."
        ),
    ),
    "find_nearby_places": (
        "Find places of a kind (cafés, pharmacies, parking) near a location.",
        _obj(
            {
                "location": _s("Address or 'lat,lon'."),
                "kind": _s("What to look for."),
                "radius_m": _i("Search radius in metres."),
            },
            ("location", "kind"),
        ),
        lambda r: "\n".join(
            f"{_pick(r, ('Corner', 'Blue Door', 'Green Leaf', 'Central'))} "
            f"{_pick(r, ('Café', 'Pharmacy', 'Parking'))}, {r.randint(50, 900)} m"
            for _ in range(3)
        ),
    ),
    "get_travel_time": (
        "Estimate the travel time between two places at a given departure time.",
        _obj(
            {"origin": _s("Start."), "destination": _s("End."), "depart_at": _s("ISO 8601 time.")},
            ("origin", "destination"),
        ),
        lambda r: f"Estimated {r.randint(6, 95)} min with {_pick(r, ('light', 'moderate', 'heavy'))} traffic.",
    ),
    # math
    "calculator": (
        "Evaluate an arithmetic expression exactly and return the result.",
        _obj({"expression": _s("E.g. (3 + 4) * 2 / 7.")}, ("expression",)),
        lambda r: f"= {r.randint(-500, 5000)}",
    ),
    "convert_units": (
        "Convert a quantity from one unit to another (length, mass, volume, temperature, currency-free).",
        _obj(
            {"value": _n("The quantity."), "from_unit": _s("E.g. km."), "to_unit": _s("E.g. mi.")},
            ("value", "from_unit", "to_unit"),
        ),
        lambda r: f"= {r.uniform(0.01, 900):.4f}",
    ),
    "solve_equation": (
        "Solve an algebraic equation for a variable symbolically.",
        _obj({"equation": _s("E.g. 2*x + 3 = 11."), "variable": _s("The unknown.")}, ("equation",)),
        lambda r: f"Solutions: {r.randint(-20, 20)}",
    ),
    "compute_statistics": (
        "Compute mean, median, standard deviation and quartiles of a list of numbers.",
        _obj({"values": {"type": "array", "items": {"type": "number"}, "description": "The numbers."}}, ("values",)),
        lambda r: f"mean {r.uniform(0, 100):.3f}, median {r.uniform(0, 100):.3f}, sd {r.uniform(0, 30):.3f}",
    ),
    "currency_exchange": (
        "Convert an amount between currencies at today's reference rate.",
        _obj(
            {"amount": _n("The amount."), "from_currency": _s("ISO code."), "to_currency": _s("ISO code.")},
            ("amount", "from_currency", "to_currency"),
        ),
        lambda r: f"= {r.uniform(1, 5000):.2f} (rate {r.uniform(0.2, 3):.4f}, reference time 14:00 CET)",
    ),
    # email and messaging
    "send_email": (
        "Send an e-mail from the user's account.",
        _obj(
            {"to": _s("Recipient address."), "subject": _s("Subject line."), "body": _s("Message text.")},
            ("to", "subject", "body"),
        ),
        lambda r: f"Message sent (id msg_{r.getrandbits(40):010x}).",
    ),
    "search_inbox": (
        "Search the user's mailbox and list matching messages with sender, date and subject.",
        _obj({"query": _s("Search terms or Gmail-style filters."), "max_results": _i("How many.")}, ("query",)),
        lambda r: "\n".join(
            f"{_pick(r, _PEOPLE)} · {r.randint(1, 28)} {_pick(r, ('Mar', 'Apr', 'May'))} · "
            f"{_pick(r, ('Lunch on Friday?', 'Invoice attached', 'Your parcel is on its way'))}"
            for _ in range(2)
        ),
    ),
    "read_email": (
        "Open a message of the user's mailbox by its id.",
        _obj({"message_id": _s("The message id from search_inbox.")}, ("message_id",)),
        lambda r: f"From: {_pick(r, _PEOPLE)}\nSubject: Lunch on Friday?\n\nAre you free at {r.randint(12, 14)}:00?",
    ),
    "send_chat_message": (
        "Post a message to a team chat channel.",
        _obj({"channel": _s("Channel name, e.g. #general."), "text": _s("The message.")}, ("channel", "text")),
        lambda r: f"Posted to the channel ({r.randint(2, 60)} members).",
    ),
    "create_reminder": (
        "Set a reminder that notifies the user at a given time.",
        _obj({"text": _s("What to be reminded of."), "at": _s("ISO 8601 date and time.")}, ("text", "at")),
        lambda r: f"Reminder set (id rem_{r.randint(1000, 9999)}).",
    ),
    "translate_text": (
        "Translate a short text between two languages.",
        _obj({"text": _s("The text."), "target_language": _s("ISO 639-1 code.")}, ("text", "target_language")),
        lambda r: "Translation service: the text was translated (detected source language: en).",
    ),
}


# The usage notes a real registry's descriptions carry after their first sentence (limits, formats, side effects):
# what the `short` detail cuts and the `full` one keeps, so the registry-size ablation has something to remove.
_NOTES: dict[str, tuple[tuple[str, ...], str]] = {
    "code": (
        ("run_python", "run_javascript", "run_sql", "lint_code", "run_tests"),
        "Runs with a 30-second time limit and no network access; output longer than 10,000 characters is "
        "truncated, and files written outside the workspace are discarded when the call returns.",
    ),
    "terminal": (
        ("bash", "read_file", "write_file", "list_directory", "search_files", "git_status", "git_log"),
        "Paths are resolved relative to the workspace root; binary files are reported by size only. "
        "Use this tool for workspace operations rather than asking the user to run commands.",
    ),
    "web": (
        ("web_search", "fetch_url", "browser_click", "browser_type", "browser_screenshot", "browser_back"),
        "Pages are fetched through the sandbox's proxy with JavaScript enabled; results may be cached for up to "
        "an hour, and sites that require a login return their public view only.",
    ),
    "booking": (
        (
            "list_calendar_events",
            "create_calendar_event",
            "find_free_slot",
            "search_flights",
            "book_flight",
            "search_hotels",
            "book_restaurant",
            "cancel_booking",
        ),
        "Times are in the user's time zone unless an offset is given. Bookings are made on the user's "
        "account and may be charged to the default payment method; confirm with the user first.",
    ),
    "retail": (
        (
            "search_products",
            "get_order_status",
            "cancel_order",
            "return_item",
            "update_shipping_address",
            "get_user_details",
        ),
        "Only orders of the authenticated customer can be read or changed. Actions on an order are final once "
        "confirmed and must follow the store's policy (pending orders only for cancellation and address "
        "changes; delivered orders only for returns).",
    ),
    "weather": (
        ("get_current_weather", "get_weather_forecast", "get_air_quality"),
        "Data come from the nearest station with a report in the last hour; locations are matched to the "
        "closest known place, and metric units are used unless imperial is asked for.",
    ),
    "maps": (
        ("geocode_address", "get_directions", "find_nearby_places", "get_travel_time"),
        "Distances are in kilometres and times in minutes; an ambiguous place name is resolved to its most "
        "prominent match, so give a city or country when it matters.",
    ),
    "math": (
        ("calculator", "convert_units", "solve_equation", "compute_statistics", "currency_exchange"),
        "Arithmetic is exact for rational inputs and rounded to 10 significant digits otherwise; use it instead "
        "of mental arithmetic for anything beyond a single operation.",
    ),
    "messaging": (
        ("send_email", "search_inbox", "read_email", "send_chat_message", "create_reminder", "translate_text"),
        "Messages are sent from the user's own account and cannot be recalled; search covers the last 12 "
        "months of mail and chat.",
    ),
}
_NOTE_OF = {name: note for names, note in _NOTES.values() for name in names}


def builtin_tools() -> list[tuple[ToolSchema, Handler]]:
    """Every built-in tool as (OpenAI-style schema without the wrapper, result handler), in a fixed order; its
    description is its one-sentence summary followed by its domain's usage notes."""
    return [
        ({"name": name, "description": f"{desc} {_NOTE_OF[name]}", "parameters": params}, handler)
        for name, (desc, params, handler) in _TOOLS.items()
    ]


def builtin_result(name: str, args: JsonObject, handler: Handler) -> str:
    """The deterministic result of one call: the handler fed a generator seeded from the name and arguments."""
    key = json.dumps([name, args], sort_keys=True, default=str)
    rng = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
    return handler(rng)
