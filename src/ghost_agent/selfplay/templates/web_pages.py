"""web_automation (one page): scraping a local HTML file in the workspace, never the network.

The pages are written the way real ones are (navigation, sale prices, entities, nested tags, a second form or
table), and the references parse them with the standard library's `html.parser` (bs4 and lxml may be missing).
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from ghost_agent.selfplay.checks import FileContents, PythonTests, ScriptOutput
from ghost_agent.selfplay.task import Task, draft

SHOPS = ("Bramble & Co", "Northwind Outfitters", "Pixel Pantry", "Tidewater Tools", "Copper Kettle")
ITEMS = ("Desk Lamp", "Wool Scarf", "Travel Mug", "Notebook", "Cable Set", "Chef Knife", "Yoga Mat", "Backpack",
         "Phone Stand", "Water Bottle", "Tea Sampler", "Hand Cream", "Bike Light", "Plant Pot", "Beanie")
SITES = ("acme", "northwind", "brightside", "lumen", "kettle", "harbor")
PEOPLE = ("Ana Silva", "Ben Okafor", "Chloe Martin", "Dev Patel", "Emma Larsen", "Farid Haddad", "Grace Kim",
          "Hiro Tanaka", "Ines Moreau", "Jonas Berg")


def _code(sentence: str, code: str) -> str:
    return f"{sentence}\n\n```python\n{code.strip()}\n```"


def _money(value: float) -> str:
    return f"${value:,.2f}"


# Product names and prices into a CSV


_SHOP_CODE = '''
import csv
from html.parser import HTMLParser


class ShopParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.products = []
        self.field = None
        self.in_badge = False

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if "product" in classes:
            self.products.append({"name": "", "price": "", "sale": "", "sold_out": "sold-out" in classes})
        elif not self.products:
            return
        elif "badge" in classes:
            self.in_badge = True
        elif "name" in classes:
            self.field = "name"
        elif "price" in classes:
            self.field = OLD_FIELD if "old" in classes else ("sale" if "sale" in classes else "price")

    def handle_endtag(self, tag):
        if tag == "span" and self.in_badge:
            self.in_badge = False
        elif tag in ("h2", "span"):
            self.field = None

    def handle_data(self, data):
        if self.field and not self.in_badge:
            self.products[-1][self.field] += data


parser = ShopParser()
parser.feed(open("shop.html", encoding="utf-8").read())
with open("prices.csv", "w", newline="", encoding="utf-8") as f:
    out = csv.writer(f)
    HEADERout.writerow(["name", "price"])
    for p in parser.products:
        if SKIP_SOLDp["sold_out"]:
            continue
        price = PRICE_EXPR
        out.writerow([" ".join(p["name"].split()), PRICE_OUT])
'''


def _shop_code(*, header: bool = True, symbol: bool = False, old: bool = False, sold: bool = False) -> str:
    text = 'p["price"]' if old else '(p["sale"] or p["price"])'  # old: the first (crossed-out) price
    return (_SHOP_CODE.replace("HEADER", "" if header else "# ")
            .replace("OLD_FIELD", '"price"' if old else "None")
            .replace("SKIP_SOLD", "" if not sold else "False and ")
            .replace("PRICE_EXPR", f"{text}.strip()" if symbol
                     else f'float({text}.strip().lstrip("$").replace(",", ""))')
            .replace("PRICE_OUT", "price" if symbol else 'f"{price:.2f}"'))


@dataclass(frozen=True)
class ShopPricesCsv:
    """'extract every product name and price from shop.html into prices.csv' (difficulty adds sale prices,
    then sold-out items to skip, 'New' badges inside names, entities and thousands separators)."""

    cluster: str = "web_automation"
    name: str = "shop_prices_csv"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        shop = rng.choice(SHOPS)
        page_file = rng.choice(("shop.html", "products.html", "catalog.html", "store.html"))
        csv_file = rng.choice(("prices.csv", "products.csv", "price_list.csv"))
        names = rng.sample(ITEMS, (5, 7, 9)[difficulty - 1])
        if difficulty >= 3:
            names[rng.randrange(len(names))] += " & Case"
        cards, rows = [], []
        for i, name in enumerate(names):
            price = round(rng.uniform(4, 60) * (25 if difficulty >= 3 and i == 1 else 1), 2)
            sale = round(price * rng.choice((0.6, 0.75, 0.8)), 2) if difficulty >= 2 and i % 3 == 1 else None
            sold = difficulty >= 3 and i % 4 == 2
            badge = ' <span class="badge">New</span>' if difficulty >= 3 and i % 3 == 0 else ""
            classes = "product sold-out" if sold else "product"
            prices = (f'<span class="price old">{_money(price)}</span> <span class="price sale">{_money(sale)}</span>'
                      if sale else f'<span class="price">{_money(price)}</span>')
            cards.append(f'  <div class="{classes}" data-sku="SKU-{rng.randint(1000, 9999)}">\n'
                         f'    <h2 class="name">{html.escape(name, quote=False)}{badge}</h2>\n'
                         f'    <p class="desc">{rng.choice(("Bestseller.", "Limited run.", "Ships in 2 days."))}</p>\n'
                         f'    {prices}\n  </div>')
            if not sold:
                rows.append(f"{name},{(sale or price):.2f}")
        page = (f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(shop)} - all products"
                f"</title></head>\n<body>\n<nav><a href=\"/\">Home</a> <a href=\"/cart\">Cart (0)</a></nav>\n"
                f"<div class=\"grid\">\n" + "\n".join(cards) + "\n</div>\n<footer>Prices include VAT.</footer>\n"
                "</body></html>\n")
        expected = "name,price\n" + "\n".join(rows) + "\n"
        prompt = (f"{page_file} is a saved copy of {shop}'s product page. Extract every product's name and price "
                  f"into {csv_file} with a header row `name,price`, one row per product in page order, price as a "
                  "plain number with 2 decimals (no currency sign).")
        if difficulty >= 2:
            prompt += " Where a product is on sale use the sale price."
        if difficulty >= 3:
            prompt += " Skip sold-out products, and leave the 'New' badges out of the names."
        def code(**flags: bool) -> str:
            return _shop_code(**flags).replace("shop.html", page_file).replace("prices.csv", csv_file)

        reference = _code("This parses the page with html.parser and writes the CSV:", code())
        bad = [_code("This writes the prices as shown on the page:", code(symbol=True))]
        if difficulty >= 3:
            bad.append(_code("Every product card goes into the CSV:", code(sold=True)))
        elif difficulty == 2:
            bad.append(_code("Each card's price goes into the CSV:", code(old=True)))
        else:
            bad.append(_code("This writes the rows:", code(header=False)))
        return draft(self, difficulty, prompt=prompt, check=FileContents(csv_file, expected), reference=reference,
                     bad=bad, files={page_file: page})


# External links on a page


_LINKS_CODE = '''
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href.strip())


def FN(html, base_url):
    parser = _Links()
    parser.feed(html)
    ours = OURS
    found = []
    for href in parser.hrefs:
        url = JOIN
        parts = urlsplit(url)
        if SCHEMEparts.scheme not in ("http", "https"):
            continue
        host = HOST
        if INTERNAL:
            continue
        if DEDUPEurl not in found:
            found.append(url)
    return found
'''


def _links_code(fn: str, *, suffix: bool, join: bool = True, lower: bool = True, dedupe: bool = True) -> str:
    internal = "host == ours or host.endswith('.' + ours)" if suffix else "host == ours"
    ours = "urlsplit(base_url).hostname.removeprefix('www.')" if suffix else "urlsplit(base_url).hostname"
    return (_LINKS_CODE.replace("FN", fn).replace("OURS", ours if lower else ours.replace(".hostname", ".netloc"))
            .replace("JOIN", "urljoin(base_url, href)" if join else "href")
            .replace("SCHEME", "" if join else "False and ")
            .replace("HOST", "parts.hostname or ''" if lower else "parts.netloc")
            .replace("INTERNAL", internal).replace("DEDUPE", "" if dedupe else "True or "))


def _links_page(rng: random.Random, host: str, difficulty: int) -> tuple[str, list[str]]:
    """A page's HTML at `https://<host>/...` and the hrefs in it (in order)."""
    site = host.split(".")[-2]
    other = [f"https://{w}.org/{rng.choice(('docs', 'about', 'p/1'))}" for w in rng.sample(SITES, 3) if w != site]
    hrefs = ["/", "/pricing", f"blog/{rng.randint(1, 40)}-release-notes", other[0], "#top", other[1], "/contact",
             other[0]]
    if difficulty >= 2:
        hrefs += ["mailto:hello@" + host, f"//cdn.{rng.choice(SITES)}fonts.net/css?family=Inter",
                  f"HTTPS://{host.upper()}/careers", "javascript:void(0)"]
    if difficulty >= 3:
        base_domain = host.removeprefix("www.")
        hrefs += [f"https://blog.{base_domain}/2024/roadmap", f"https://{base_domain}.evil.net/login",
                  f"https://status.{base_domain}/"]
    rng.shuffle(hrefs)
    body = "\n".join(f'  <li><a href="{html.escape(h)}">{rng.choice(("Read more", "Link", "here", "Docs"))}</a>'
                     f'</li>' for h in hrefs)
    page = (f"<!doctype html>\n<html><head><link rel=\"stylesheet\" href=\"https://cdn.example.net/x.css\">"
            f"<title>{site}</title></head>\n<body>\n<img src=\"https://img.example.net/logo.png\">\n<ul>\n{body}\n"
            f"</ul>\n<a name=\"bottom\"></a>\n</body></html>\n")
    return page, hrefs


def _externals(hrefs: list[str], base: str, suffix: bool) -> list[str]:
    ours = urlsplit(base).hostname or ""
    if suffix:
        ours = ours.removeprefix("www.")
    found: list[str] = []
    for href in hrefs:
        url = urljoin(base, href)
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.scheme not in ("http", "https") or host == ours or (suffix and host.endswith("." + ours)):
            continue
        if url not in found:
            found.append(url)
    return found


@dataclass(frozen=True)
class ExternalLinks:
    """'which links in page.html point to external sites': a function graded on the page and hidden ones
    (difficulty adds protocol-relative, mailto and upper-case links, then our own subdomains)."""

    cluster: str = "web_automation"
    name: str = "external_links"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("external_links", "outbound_links", "find_external", "offsite_links"))
        host = f"www.{rng.choice(SITES)}.com"
        base = f"https://{host}/{rng.choice(('about', 'blog/launch', 'docs/start'))}"
        suffix = difficulty >= 3
        page, hrefs = _links_page(rng, host, difficulty)
        cases = [(page, base, _externals(hrefs, base, suffix))]
        for _ in range(2):
            other_host = f"www.{rng.choice(SITES)}.com"
            other_base = f"https://{other_host}/index.html"
            other_page, other_hrefs = _links_page(rng, other_host, difficulty)
            cases.append((other_page, other_base, _externals(other_hrefs, other_base, suffix)))
        prompt = (f"page.html is our page at {base}. Which of its links point to external sites? Write "
                  f"`{fn}(html, base_url)` that returns the absolute URLs of the <a href> links that leave our site, "
                  "each once, in the order they first appear (resolve relative links against base_url).")
        if difficulty >= 2:
            prompt += " Ignore mailto:/javascript: links and in-page anchors; host names are case-insensitive."
        if difficulty >= 3:
            prompt += f" Our subdomains (blog.{host.removeprefix('www.')} and the like) are not external."
        tests = f"CASES = {cases!r}\n" + (
            "assert open('page.html', encoding='utf-8').read() == CASES[0][0]\n"
            f"for page, base, want in CASES:\n    got = {fn}(page, base)\n"
            "    assert list(got) == want, f'got {got}, expected {want}'\n")
        reference = _code("html.parser collects the hrefs; urljoin makes them absolute so hosts compare cleanly:",
                          _links_code(fn, suffix=suffix))
        bad = [_code("Collect the links whose host isn't ours:", _links_code(fn, suffix=suffix, dedupe=False))]
        if difficulty >= 3:
            bad.append(_code("A link is external when its host differs from ours:", _links_code(fn, suffix=False)))
        elif difficulty == 2:
            bad.append(_code("Compare each link's host with ours:", _links_code(fn, suffix=suffix, lower=False)))
        else:
            bad.append(_code("Check each link's host:", _links_code(fn, suffix=suffix, join=False)))
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests, entry_point=fn), reference=reference,
                     bad=bad, files={"page.html": page})


# A table into a list of dicts


_TABLE_CODE = """
from html.parser import HTMLParser


class _Table(HTMLParser):
    def __init__(self, table_id):
        super().__init__()
        self.table_id = table_id
        self.depth = 0  # > 0 inside the wanted table
        self.in_foot = False
        self.rows = []
        self.cell = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            if self.depth or PICK:
                self.depth += 1
        elif not self.depth:
            return
        elif tag == "tfoot":
            self.in_foot = FOOT
        elif tag == "tr" and not self.in_foot:
            self.rows.append([])
        elif tag in ("td", "th") and not self.in_foot:
            self.cell = []

    def handle_endtag(self, tag):
        if not self.depth:
            return
        if tag == "table":
            self.depth -= 1
        elif tag == "tfoot":
            self.in_foot = False
        elif tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(CELL)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def FN(html, table_id):
    parser = _Table(table_id)
    parser.feed(html)
    header, *body = [row for row in parser.rows if row]
    return [dict(zip(header, row)) for row in BODY]
"""


def _table_code(fn: str, *, by_id: bool = True, foot: bool = True, strip: bool = True, header: bool = True) -> str:
    pick = 'dict(attrs).get("id") == self.table_id' if by_id else "not self.rows"
    cell = '" ".join("".join(self.cell).split())' if strip else '"".join(self.cell)'
    return (_TABLE_CODE.replace("FN", fn).replace("PICK", pick).replace("FOOT", "True" if foot else "False")
            .replace("CELL", cell).replace("BODY", "body" if header else "[header] + body"))


def _table_html(rng: random.Random, table_id: str, difficulty: int) -> tuple[str, list[dict[str, str]]]:
    """One <table> and the rows a reader should get from it."""
    cols = ["Name", "Team", "Commits", "Reviews"] + (["Since"] if difficulty >= 2 else [])
    people = rng.sample(PEOPLE, (4, 6, 7)[difficulty - 1])
    rows, trs = [], []
    for i, person in enumerate(people):
        row = {"Name": person, "Team": rng.choice(("Core", "Web", "Data", "Infra & Ops")),
               "Commits": str(rng.randint(3, 400)), "Reviews": str(rng.randint(0, 90))}
        if difficulty >= 2:
            row["Since"] = str(rng.randint(2015, 2024))
        cells = {k: html.escape(v, quote=False) for k, v in row.items()}
        cells["Name"] = f"\n        {cells['Name']}\n      "  # as a template engine indents it
        if difficulty >= 3 and i % 2 == 0:
            cells["Name"] = f'<a href="/u/{i}">{cells["Name"]}</a>\n        <small>(lead)</small>'
            row["Name"] += " (lead)"
        if difficulty >= 2 and i == 1:
            cells["Reviews"], row["Reviews"] = "  ", ""
        rows.append(row)
        trs.append("      <tr>" + "".join(f"<td>{cells[c]}</td>" for c in cols) + "</tr>")
    head = "    <thead><tr>" + "".join(f"<th>{c}</th>" for c in cols) + "</tr></thead>"
    foot = ("\n    <tfoot><tr><td>Total</td><td></td><td>"
            + str(sum(int(r["Commits"]) for r in rows)) + "</td><td></td>"
            + ("<td></td>" if difficulty >= 2 else "") + "</tr></tfoot>") if difficulty >= 3 else ""
    table = (f'  <table id="{table_id}" class="stats">\n{head}\n    <tbody>\n' + "\n".join(trs)
             + f"\n    </tbody>{foot}\n  </table>")
    return table, rows


@dataclass(frozen=True)
class TableRows:
    """Parse an HTML table (picked by id) into a list of dicts keyed by its header (difficulty adds a second
    table before it and empty cells, then links and tags inside cells and a totals footer to leave out)."""

    cluster: str = "web_automation"
    name: str = "table_rows"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("read_table", "parse_table", "table_to_dicts", "scrape_table"))
        table_id = rng.choice(("contributors", "team-stats", "leaderboard", "q3-report"))

        def page(seed_rng: random.Random) -> tuple[str, list[dict[str, str]]]:
            table, rows = _table_html(seed_rng, table_id, difficulty)
            decoy = ""
            if difficulty >= 2:
                decoy, _ = _table_html(seed_rng, "archive", 1)
                decoy = "<h2>Last year</h2>\n" + decoy + "\n"
            text = (f"<!doctype html>\n<html><body>\n<h1>Contributors</h1>\n{decoy}<h2>This quarter</h2>\n{table}\n"
                    "</body></html>\n")
            return text, rows

        first, want = page(rng)
        hidden = [page(rng) for _ in range(2)]
        prompt = (f"report.html has a table with id=\"{table_id}\". Write `{fn}(html, table_id)` that returns its "
                  "rows as a list of dicts keyed by the header cells (cell text with whitespace collapsed), "
                  "using only the standard library.")
        if difficulty >= 2:
            prompt += " The page has other tables too."
        if difficulty >= 3:
            prompt += " Cells can contain links and other tags (I want their text); skip the totals row in <tfoot>."
        cases = [(first, want)] + hidden
        tests = f"ID = {table_id!r}\nCASES = {cases!r}\n" + (
            "assert open('report.html', encoding='utf-8').read() == CASES[0][0]\n"
            f"for page, want in CASES:\n    got = {fn}(page, ID)\n"
            "    assert got == want, f'got {got[:2]}..., expected {want[:2]}...'\n")
        reference = _code("A small html.parser subclass tracks when it is inside that table and collects cell text:",
                          _table_code(fn))
        bad = [_code("Collect each row's cells into a dict:", _table_code(fn, header=False))]
        if difficulty >= 3:
            bad.append(_code("Parse the table's rows:", _table_code(fn, foot=False)))
        elif difficulty == 2:
            bad.append(_code("Parse the table's rows:", _table_code(fn, by_id=False)))
        else:
            bad.append(_code("Parse the table's rows:", _table_code(fn, strip=False)))
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests, entry_point=fn), reference=reference,
                     bad=bad, files={"report.html": first})


# A form's fields and their defaults


_FORM_CODE = """
from html.parser import HTMLParser


class FormFields(HTMLParser):
    def __init__(self, form_id):
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields = []
        self.select = self.option = self.textarea = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.inside = PICK
        elif not self.inside or not a.get("name", "name") or DISABLED:
            return
        elif tag == "input":
            kind = (a.get("type") or "text").lower()
            if kind in ("submit", "button", "reset", "image", "file") or "name" not in a:
                return
            if CHECKEDkind in ("checkbox", "radio") and "checked" not in a:
                return
            default = "on" if kind in ("checkbox", "radio") else ""
            if HIDDENkind != "hidden":
                self.fields.append((a["name"], VALUE))
        elif tag == "select" and "name" in a:
            self.select = {"name": a["name"], "first": None, "chosen": None}
        elif tag == "option" and self.select is not None:
            self.option = {"value": a.get("value"), "text": "", "selected": "selected" in a}
        elif tag == "textarea" and "name" in a:
            self.textarea = [a["name"], ""]

    def handle_data(self, data):
        if self.option is not None:
            self.option["text"] += data
        elif self.textarea is not None:
            self.textarea[1] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "option" and self.option is not None:
            value = self.option["value"] if self.option["value"] is not None else self.option["text"].strip()
            if self.select["first"] is None:
                self.select["first"] = value
            if self.option["selected"] and SELECTED:
                self.select["chosen"] = value
            self.option = None
        elif tag == "select" and self.select is not None:
            chosen = self.select["chosen"]
            self.fields.append((self.select["name"], chosen if chosen is not None else self.select["first"] or ""))
            self.select = None
        elif tag == "textarea" and self.textarea is not None:
            self.fields.append(tuple(self.textarea))
            self.textarea = None


parser = FormFields(FORM_ID)
parser.feed(open("signup.html", encoding="utf-8").read())
for name, value in parser.fields:
    print(f"{name}={value}")
"""


def _form_code(form_id: str, *, pick: bool = True, disabled: bool = True, checked: bool = True,
               hidden: bool = True, value: bool = True, selected: bool = True) -> str:
    return (_FORM_CODE.replace("FORM_ID", repr(form_id))
            .replace("PICK", 'a.get("id") == self.form_id' if pick else "True")
            .replace("DISABLED", '"disabled" in a' if disabled else "False")
            .replace("CHECKED", "" if checked else "False and ")
            .replace("HIDDEN", "True or " if hidden else "")
            .replace("VALUE", 'a.get("value", default)' if value else 'a.get("value")')
            .replace("SELECTED", "True" if selected else "False"))


@dataclass(frozen=True)
class FormDefaults:
    """'what does the signup form send by default': each field as name=value, as a browser would submit it
    (difficulty adds selects, a textarea and checkboxes, then a second form, radios and a disabled field)."""

    cluster: str = "web_automation"
    name: str = "form_defaults"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        form_id = rng.choice(("signup", "register", "join", "create-account"))
        page_file = rng.choice(("signup.html", "register.html", "join.html", "onboarding.html"))
        flow = rng.choice(("sign-up flow", "onboarding test", "account-creation bot", "registration smoke test"))
        token = "".join(rng.choice("0123456789abcdef") for _ in range(16))
        source = rng.choice(("newsletter", "twitter", "partner", "podcast")) + f"-{rng.randint(1, 99)}"
        country = rng.choice(("NO", "DE", "BR", "JP", "CA", "KE"))
        html_fields = [f'<input type="hidden" name="csrf_token" value="{token}">',
                       '<label>Username <input type="text" name="username"></label>',
                       '<label>Email <input type="email" name="email" placeholder="you@example.com"></label>',
                       f'<input type="text" name="country" value="{country}">',
                       f'<input type="hidden" name="ref" value="{source}">']
        want = [("csrf_token", token), ("username", ""), ("email", ""), ("country", country), ("ref", source)]
        if difficulty >= 2:
            plans = rng.sample(("free", "starter", "pro", "team", "enterprise"), 3)
            chosen = rng.randint(1, 2)
            opts = "".join(f'<option value="{p}"{" selected" if i == chosen else ""}>{p.title()}</option>'
                           for i, p in enumerate(plans))
            zones = rng.sample(("Europe/Oslo", "America/Toronto", "Asia/Tokyo", "Africa/Nairobi"), 3)
            bio = rng.choice(("Hi there", "Data person & cyclist", "Loves tea"))
            html_fields += [f'<select name="plan">{opts}</select>',
                            "<select name=\"timezone\">" + "".join(f"<option>{z}</option>" for z in zones)
                            + "</select>",
                            f'<textarea name="bio" rows="3">{html.escape(bio, quote=False)}</textarea>',
                            '<label><input type="checkbox" name="newsletter" value="yes" checked> News</label>',
                            '<label><input type="checkbox" name="terms"> I accept the terms</label>']
            want += [("plan", plans[chosen]), ("timezone", zones[0]), ("bio", bio), ("newsletter", "yes")]
        if difficulty >= 3:
            period = rng.choice(("monthly", "yearly"))
            html_fields += [f'<label><input type="radio" name="billing" value="{p}"'
                            f'{" checked" if p == period else ""}> {p}</label>' for p in ("monthly", "yearly")]
            html_fields.append(f'<input type="text" name="promo" value="{rng.choice(("SPRING", "WELCOME10"))}" '
                               'disabled>')
            want.append(("billing", period))
        html_fields.append('<button type="submit">Create account</button>')
        search = ('<form id="search" action="/search"><input type="search" name="q" value="pricing">'
                  "<button>Go</button></form>\n") if difficulty >= 3 else ""
        page = ("<!doctype html>\n<html><body>\n<header>" + search + "</header>\n<main>\n"
                f'<form id="{form_id}" action="/accounts" method="post">\n  '
                + "\n  ".join(html_fields) + "\n</form>\n</main>\n</body></html>\n")
        expected = "\n".join(f"{k}={v}" for k, v in want) + "\n"
        prompt = (f"I'm automating our {flow}. {page_file} is the page; write a Python script that prints "
                  f"what the form with id \"{form_id}\" submits if the user changes nothing: one `name=value` line "
                  "per field in page order (a field without a value sends an empty string; buttons send nothing).")
        if difficulty >= 2:
            prompt += " Treat selects, textareas and checkboxes the way a browser does."
        if difficulty >= 3:
            prompt += " The page has more than one form, and disabled fields aren't submitted."
        reference = _code("This walks the form with html.parser and applies the browser's rules for defaults:",
                          _form_code(form_id))
        if difficulty >= 3:
            bad = [_form_code(form_id, pick=False), _form_code(form_id, disabled=False)]
        elif difficulty == 2:
            bad = [_form_code(form_id, selected=False), _form_code(form_id, checked=False)]
        else:
            bad = [_form_code(form_id, hidden=False), _form_code(form_id, value=False)]
        bad_replies = [_code("This prints the form's fields with their default values:", b) for b in bad]
        reference, bad_replies = (reference.replace("signup.html", page_file),
                                  [b.replace("signup.html", page_file) for b in bad_replies])
        return draft(self, difficulty, prompt=prompt, check=ScriptOutput("python", expected), reference=reference,
                     bad=bad_replies, files={page_file: page})


TEMPLATES = (ShopPricesCsv(), ExternalLinks(), TableRows(), FormDefaults())
