"""The status page in a real headless browser (Debian's chromium through its chromedriver, `make browser`), against
the daemon on loopback with a seeded home: each section renders its data and its plots, an action round-trips,
the api key is asked for once and kept out of URLs, hostile text stays text, and any JavaScript error fails the
test. Screenshots go to each test's tmp dir."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply
from ghost_agent.settings import Settings
from tests.conftest import daemon_on_port, make_settings
from tests.server.console_home import HOSTILE, Seeded, seed, seed_evals, seed_learning

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                reason="chromium and chromedriver are missing: run `make browser` (apt)")
KEY = "a-long-enough-api-key-1234"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--no-proxy-server"):
        options.add_argument(arg)
    options.binary_location = str(CHROMIUM)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


class Page:
    """The browser on one daemon's page; `errors()` are the page's JavaScript errors and console errors."""

    def __init__(self, driver: Any, base: str, shots: Path) -> None:
        self.driver, self.base, self.shots = driver, base.rstrip("/"), shots

    def open(self, section: str = "now") -> Any:
        self.driver.get("about:blank")  # a hash-only change from the last page would not reload it
        self.driver.get(f"{self.base}/ui#{section}")
        return self.ready(section.split("/")[0])

    def ready(self, section: str, timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.driver.find_elements("css selector", f'main[data-ready="1"][data-section="{section}"]')
            if found:
                return found[0]
            time.sleep(0.05)
        self.shot(f"timeout-{section}")
        banner = self.driver.find_element("id", "banner").text
        raise AssertionError(f"section {section!r} never rendered; banner {banner!r}; errors: {self.errors()}")

    def shot(self, name: str) -> None:
        self.driver.save_screenshot(str(self.shots / f"{name}.png"))

    def errors(self) -> list[str]:
        thrown = self.driver.execute_script("return window.__ghostErrors || []")
        logged = [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        return list(thrown) + logged

    def texts(self, selector: str) -> list[str]:
        return [e.text for e in self.driver.find_elements("css selector", selector)]


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[Settings, Seeded]:
    settings = make_settings(tmp_path, watchdog=False)
    return settings, seed(settings)


@pytest.fixture
def page(browser: Any, seeded: tuple[Settings, Seeded], tmp_path: Path) -> Iterator[Page]:
    backend = ScriptedBackend(model="scripted-model", replies=[ScriptedReply(content="one two three four five")])
    with daemon_on_port(seeded[0], backend) as base:
        browser.get_log("browser")  # drop what an earlier test left
        page = Page(browser, base, tmp_path)
        yield page
        page.shot("last")
        assert page.errors() == []


@contextlib.contextmanager
def page_on(browser: Any, tmp_path: Path, *seeders: Callable[[Settings], Any]) -> Iterator[Page]:
    """The browser on a daemon whose home `seeders` filled (none: a fresh home); no page error may be left."""
    settings = make_settings(tmp_path, watchdog=False)
    for fill in seeders:
        fill(settings)
    with daemon_on_port(settings, ScriptedBackend(model="m")) as base:
        browser.get_log("browser")  # drop what an earlier test left
        page = Page(browser, base, tmp_path)
        yield page
        assert page.errors() == []


def plotted_lines(main: Any) -> dict[str, Any]:
    """The line plots' series by name."""
    return {g.get_attribute("data-name"): g for g in main.find_elements("css selector", "svg.lines g.line")}


def test_now_shows_the_daemon_and_plots_the_last_replies(page: Page) -> None:
    httpx.post(page.base + "/v1/chat/completions", timeout=10,
               json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}).raise_for_status()
    main = page.open("now")
    page.shot("now")
    titles = page.texts("main h2")
    assert {"Backend", "Sandbox", "Load", "Watchdog", "PRM model", "Router model", "Counts"} <= set(titles)
    assert len(main.find_elements("css selector", "svg.plot rect.bar")) == 1
    assert "requests / min" in main.text


def test_turns_list_and_open_as_a_tree_with_hostile_text_kept_as_text(page: Page, seeded: tuple[Settings, Seeded]
                                                                      ) -> None:
    main = page.open("turns")
    rows = main.find_elements("css selector", "#turns tr.row")
    assert len(rows) == 12
    assert any(HOSTILE in text for text in page.texts("#turns td.text"))
    assert page.driver.execute_script("return window.__pwned === undefined")
    rows[0].click()  # the newest: the tool-using turn
    tree = page.ready("turn")
    page.shot("turn")
    steps = page.texts("#tree li.step > strong")
    assert steps[:1] == ["turn"] and "0. python" in steps and "1. read_file" in steps and "model: draft" in steps
    assert tree.find_elements("css selector", "#tree .bar")
    assert "computed answer" in tree.text


def test_search_narrows_the_turns(page: Page) -> None:
    main = page.open("turns")
    box = main.find_element("css selector", "input[type=search]")
    box.send_keys("number 3:\n")
    deadline = time.monotonic() + 5
    while len(page.driver.find_elements("css selector", "#turns tr.row")) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [r.text for r in page.driver.find_elements("css selector", "#turns tr.row")][0].endswith(
        "request number 3: what is 3 squared?")


def test_a_pinned_lesson_shows_pinned_after_a_reload(page: Page, seeded: tuple[Settings, Seeded]) -> None:
    lesson_id = seeded[1].lesson_id
    main = page.open("learning")
    page.shot("learning")
    row = main.find_element("css selector", f'tr.lesson[data-id="{lesson_id}"]')
    assert row.get_attribute("data-status") == "active"
    assert any(HOSTILE in text for text in page.texts("tr.lesson .solution"))
    row.find_element("css selector", 'button[data-action="pin"]').click()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        rows = page.driver.find_elements("css selector", f'tr.lesson[data-id="{lesson_id}"][data-status="pinned"]')
        if rows:
            break
        time.sleep(0.05)
    page.open("learning")
    again = page.driver.find_element("css selector", f'tr.lesson[data-id="{lesson_id}"]')
    assert again.get_attribute("data-status") == "pinned"
    assert page.driver.execute_script("return window.__pwned === undefined")
    assert "python → read_file" in page.driver.find_element("id", "skills").text or \
        "python" in page.driver.find_element("id", "skills").text


def test_the_watchdog_timeline_plots_every_run(page: Page) -> None:
    main = page.open("watchdog")
    page.shot("watchdog")
    marks = main.find_elements("css selector", "svg.timeline rect.run")
    classes = sorted(m.get_attribute("class").split()[-1] for m in marks)
    assert classes == ["run-failed", "run-ok", "run-ok", "run-skipped", "run-yielded"]
    assert main.find_elements("css selector", "#phases tbody tr")


def test_a_fresh_home_says_so_in_every_section(browser: Any, tmp_path: Path) -> None:
    with page_on(browser, tmp_path) as page:
        for section, says in (("now", "No replies since the daemon started."), ("turns", "No turns recorded yet."),
                              ("learning", "No lessons yet"), ("watchdog", "No phase has run yet")):
            assert says in page.open(section).text
        page.shot("fresh")


def test_the_key_is_asked_once_and_never_put_in_a_url(browser: Any, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, watchdog=False, api_key=KEY)
    seed(settings)
    with daemon_on_port(settings, ScriptedBackend(model="m")) as base:
        browser.get_log("browser")
        browser.get(base.rstrip("/") + "/ui#turns")
        browser.execute_script("sessionStorage.clear()")
        browser.refresh()
        deadline = time.monotonic() + 10
        while not browser.find_element("id", "keyform").is_displayed() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert browser.find_element("id", "keyform").is_displayed()
        assert not browser.find_elements("css selector", "#turns tr.row")
        browser.find_element("id", "key").send_keys(KEY + "\n")
        page = Page(browser, base, tmp_path)
        page.ready("turns")
        assert len(browser.find_elements("css selector", "#turns tr.row")) == 12
        assert KEY not in browser.current_url
        assert browser.execute_script("return sessionStorage.getItem('ghost-api-key')") == KEY
        page.open("learning")  # a reload keeps the key for the tab
        assert not browser.find_element("id", "keyform").is_displayed()
        browser.execute_script("sessionStorage.clear()")
        # the 401s the key form answers are the page working as meant, not errors
        assert [e for e in page.errors() if "401" not in e] == []


def test_selfplay_and_models_plot_rates_auc_and_calibration(browser: Any, tmp_path: Path) -> None:
    with page_on(browser, tmp_path, seed, seed_learning) as page:
        main = page.open("models")
        page.shot("models")
        lines = plotted_lines(main)
        assert {"algo", "text", "prm candidate", "prm live (or 0.5)", "share sent to the agent"} <= set(lines)
        assert len(lines["algo"].find_elements("css selector", "circle")) == 2
        assert len(main.find_elements("css selector", "svg.calibration circle.bin")) == 2
        assert len(main.find_elements("css selector", "#retrains tr.retrain")) == 2


def test_an_empty_models_section_explains_itself(browser: Any, tmp_path: Path) -> None:
    with page_on(browser, tmp_path) as page:
        text = page.open("models").text
        assert "No self-play yet" in text and "No retrain yet" in text and "No chat turns yet" in text


def test_the_eval_history_is_plotted_per_suite(browser: Any, tmp_path: Path) -> None:
    with page_on(browser, tmp_path, seed_evals) as page:
        main = page.open("eval")
        page.shot("eval")
        lines = plotted_lines(main)
        assert set(lines) == {"default", "everyday"}
        assert len(lines["default"].find_elements("css selector", "circle")) == 2
        assert len(main.find_elements("css selector", "#evals tr.eval-run")) == 3
        assert "unreadable" in main.find_element("id", "baselines").text
