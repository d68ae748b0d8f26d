"""web_automation (a small site): following relative links across local pages in the workspace.

The site is a folder of HTML files that link to each other the way real sites do (`../`, `./`, fragments, query
strings, a directory link, a root-relative link), with orphan pages and stale files that a glob would pick up.
"""

from __future__ import annotations

import html
import posixpath
import random
from dataclasses import dataclass

from ghost_agent.selfplay.checks import FileContents, ScriptOutput
from ghost_agent.selfplay.task import Task, draft
from ghost_agent.selfplay.templates.concurrency import WORDS


def _code(sentence: str, code: str) -> str:
    return f"{sentence}\n\n```python\n{code.strip()}\n```"


def _page(title: str, hrefs: list[str], rng: random.Random) -> str:
    links = "\n".join(f'  <li><a href="{html.escape(h)}">{rng.choice(("More", "Read", "See also", "Go"))}</a></li>'
                      for h in hrefs)
    return (f"<!doctype html>\n<html><head><title>{title}</title>"
            '<link rel="stylesheet" href="/assets/site.css"></head>\n'
            f"<body>\n<h1>{title}</h1>\n<ul>\n{links}\n</ul>\n</body></html>\n")


# Every page reachable from the home page


_CRAWL_CODE = """
import os
import posixpath
from html.parser import HTMLParser
from urllib.parse import urlsplit

ROOT = "site"


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


seen, todo = set(), ["index.html"]
while todo:
    page = todo.pop()
    if page in seen:
        continue
    seen.add(page)
    parser = Links()
    parser.feed(open(os.path.join(ROOT, page), encoding="utf-8").read())
    for href in parser.hrefs:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path:
            continue  # another site, mailto:, or an anchor on this page
        path = PATH
        target = ROOTED
        if DIRLINK:
            target += "index.html"
        target = posixpath.normpath(target)
        if os.path.isfile(os.path.join(ROOT, target)):
            todo.append(target)

for page in sorted(seen):
    print(page)
"""

_GLOB_CODE = """
from pathlib import Path

root = Path("site")
for page in sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html")):
    print(page)
"""


def _crawl_code(*, page_dir: bool = True, strip: bool = True, rooted: bool = True, dirs: bool = True) -> str:
    join = "posixpath.join(posixpath.dirname(page), path)" if page_dir else "path"
    rooted_expr = f'path.lstrip("/") if path.startswith("/") else {join}' if rooted else join
    return (_CRAWL_CODE.replace("PATH", "parts.path" if strip else "href").replace("ROOTED", rooted_expr)
            .replace("DIRLINK", 'target.endswith("/")' if dirs else "False"))


@dataclass(frozen=True)
class SiteCrawl:
    """'which pages can a visitor reach from the home page': a crawl of a local site through relative links
    (difficulty adds fragments and query strings, then root-relative and directory links)."""

    cluster: str = "web_automation"
    name: str = "site_crawl"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        root = rng.choice(("site", "public", "dist", "_site", "export"))
        why = rng.choice(("before we migrate hosts", "to build a sitemap", "for the link audit", "for the redirects"))
        posts = [f"blog/{w}.html" for w in rng.sample(WORDS, 5)]
        guides = [f"docs/guide/{w}.html" for w in rng.sample(WORDS, 3)]
        a, b, c = (posixpath.basename(p) for p in posts[:3])
        g1, g2, g3 = (posixpath.basename(p) for p in guides)
        frag = "#team" if difficulty >= 2 else ""
        query = f"?ref={rng.choice(WORDS)}" if difficulty >= 2 else ""
        links: dict[str, list[str]] = {
            "index.html": ["about.html", ("blog/" if difficulty >= 3 else "blog/index.html"), "docs/index.html",
                           "https://github.com/example/site", "mailto:team@example.com", "#main"],
            "about.html": ["index.html", "docs/index.html"] + ([f"/{guides[2]}"] if difficulty >= 3 else []),
            "blog/index.html": [a, f"./{b}{query}", f"../about.html{frag}", "../index.html"],
            f"blog/{a}": ["index.html", f"{c}#comments" if difficulty >= 2 else c, f"../docs/guide/{g1}",
                          "missing-post.html"],
            f"blog/{b}": ["index.html", "https://news.ycombinator.com/"],
            f"blog/{c}": [a, "../index.html"],
            "docs/index.html": [f"guide/{g1}", f"./guide/{g2}", "../index.html"],
            f"docs/guide/{g1}": [g2, f"../../contact.html{frag}"],
            f"docs/guide/{g2}": [g1, "../index.html"],
            "contact.html": ["index.html"],
        }
        if difficulty < 3:
            links["docs/index.html"].append(f"guide/{g3}")
        links[f"docs/guide/{g3}"] = ["../index.html"]
        orphans = {f"blog/{posixpath.basename(posts[3])}": ["index.html", "../about.html"],
                   "drafts/redesign.html": [posts[4].removeprefix("blog/")],
                   posts[4]: ["index.html"], "old-home.html": ["about.html", "blog/index.html"]}
        files = {f"{root}/{path}": _page(path, hrefs, rng) for path, hrefs in {**links, **orphans}.items()}
        expected = "\n".join(sorted(links)) + "\n"
        prompt = (f"{root}/ is a static export of our website ({root}/ is the web root). {why.capitalize()}, write "
                  f"a Python script that starts at {root}/index.html, follows the links between our own pages, and "
                  f"prints every page a visitor can reach, as paths relative to {root}/ (like blog/index.html), one "
                  "per line, sorted. "
                  "Some links are broken and some files aren't linked from anywhere any more.")
        if difficulty >= 2:
            prompt += " Links can carry #fragments and ?query strings."
        if difficulty >= 3:
            prompt += " Some links are root-relative (/docs/...) or point at a folder (blog/ means blog/index.html)."
        reference = _code("A breadth-first walk from the home page, resolving each href against the page it's on:",
                          _crawl_code().replace('ROOT = "site"', f"ROOT = {root!r}"))
        if difficulty >= 3:
            bad = [_crawl_code(rooted=False), _crawl_code(dirs=False)]
        elif difficulty == 2:
            bad = [_crawl_code(strip=False), _crawl_code(page_dir=False)]
        else:
            bad = [_GLOB_CODE, _crawl_code(page_dir=False)]
        bad = [b.replace('ROOT = "site"', f"ROOT = {root!r}").replace('Path("site")', f"Path({root!r})") for b in bad]
        return draft(self, difficulty, prompt=prompt, check=ScriptOutput("python", expected, sort_lines=True),
                     reference=reference, bad=[_code("This prints the reachable pages:", b) for b in bad],
                     files=files)


# Job titles across paginated listings


_PAGES_CODE = """
import posixpath
from html.parser import HTMLParser


class ListingPage(HTMLParser):
    def __init__(self):
        super().__init__()
        self.titles = []
        self.next = None
        self.in_job = self.in_title = self.sponsored = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "li" and "job" in classes:
            self.in_job, self.sponsored = True, "sponsored" in classes
        elif tag == "a" and self.in_job and not self.in_title:
            self.in_title = True
            self.titles.append(["", self.sponsored])
        elif tag == "a" and "next" in (a.get("rel") or "").split():
            self.next = a.get("href")

    def handle_endtag(self, tag):
        if tag == "a":
            self.in_title = False
        elif tag == "li":
            self.in_job = False

    def handle_data(self, data):
        if self.in_title:
            self.titles[-1][0] += data


page, seen, titles = "listings/page-1.html", set(), []
while page and page not in seen:
    seen.add(page)
    parser = ListingPage()
    parser.feed(open(page, encoding="utf-8").read())
    titles += [" ".join(text.split()) for text, sponsored in parser.titles if SPONSOREDnot sponsored]
    page = NEXT if parser.next FOLLOW else None

with open("jobs.txt", "w", encoding="utf-8") as out:
    out.write("\\n".join(titles) + "\\n")
"""


def _pages_code(*, sponsored: bool = True, follow: bool = True, relative: bool = True) -> str:
    nxt = ("posixpath.normpath(posixpath.join(posixpath.dirname(page), parser.next))" if relative
           else 'posixpath.join("listings", parser.next)')
    return (_PAGES_CODE.replace("SPONSORED", "" if sponsored else "True or ").replace("NEXT", nxt)
            .replace(" FOLLOW", "" if follow else " and False"))


_JOBS = ("Backend Engineer", "Data Analyst", "Site Reliability Engineer", "Product Designer", "QA Lead",
         "Support Specialist", "ML Engineer", "Technical Writer", "Frontend Developer", "Security Analyst",
         "Platform Engineer", "Engineering Manager", "DevOps Engineer", "Solutions Architect")
_COMPANIES = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark & Sons", "Wayne Ent.")


@dataclass(frozen=True)
class PaginatedJobs:
    """'collect every job title across the listing pages into jobs.txt', following rel=next links (difficulty
    adds sponsored entries and unguessable page names, then pages in another folder, tags and entities in
    titles, and prev links)."""

    cluster: str = "web_automation"
    name: str = "paginated_jobs"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        n_pages = (3, 4, 5)[difficulty - 1]
        out_file = rng.choice(("jobs.txt", "titles.txt", "openings.txt", "job_titles.txt"))
        board = rng.choice(("a job board", "our careers site", "a recruiter's listing", "the city's job portal"))
        paths = ["listings/page-1.html"]
        for i in range(2, n_pages + 1):
            if difficulty >= 3 and i > n_pages // 2 + 1:
                paths.append(f"archive/2024-{13 - i:02d}.html")
            elif difficulty >= 2:
                paths.append(f"listings/p-{rng.randrange(16 ** 4):04x}.html")
            else:
                paths.append(f"listings/page-{i}.html")
        files, titles = {}, []
        for i, path in enumerate(paths):
            items = []
            for j in range(rng.randint(2, 4)):
                title = rng.choice(_JOBS)
                if difficulty >= 3 and j == 0:
                    title += rng.choice((" (R&D)", " - Remote"))
                sponsored = difficulty >= 2 and j == 1
                shown = html.escape(title, quote=False)
                if difficulty >= 3 and j != 1:
                    shown = f"<b>{shown}</b>" if j else f"Senior <em>{shown}</em>"
                    title = title if j else f"Senior {title}"
                items.append(f'  <li class="job{" sponsored" if sponsored else ""}"><a href="/jobs/'
                             f'{rng.randint(1000, 9999)}">{shown}</a> <span class="company">'
                             f"{html.escape(rng.choice(_COMPANIES))}</span></li>")
                if not sponsored:
                    titles.append(title)
            nav = []
            if difficulty >= 3 and i > 0:
                nav.append(f'<a rel="prev" href="{posixpath.relpath(paths[i - 1], posixpath.dirname(path))}">Prev</a>')
                nav.append(f'<a href="{posixpath.relpath(paths[0], posixpath.dirname(path))}">First</a>')
            if i + 1 < len(paths):
                nav.append(f'<a rel="next" href="{posixpath.relpath(paths[i + 1], posixpath.dirname(path))}">'
                           "Next &raquo;</a>")
            else:
                nav.append('<span class="disabled">Next &raquo;</span>')
            files[path] = (f"<!doctype html>\n<html><body>\n<h1>Jobs - page {i + 1}</h1>\n<ul class=\"jobs\">\n"
                           + "\n".join(items) + "\n</ul>\n<nav class=\"pager\">" + " ".join(nav)
                           + "</nav>\n</body></html>\n")
        files["listings/page-old.html"] = ("<!doctype html>\n<html><body>\n<ul class=\"jobs\">\n"
                                           '  <li class="job"><a href="/jobs/1">COBOL Programmer</a></li>\n'
                                           "</ul>\n</body></html>\n")
        prompt = (f"listings/page-1.html is the first page of {board} I saved locally; each page has a Next "
                  "link to the following one. Collect every job title across all the pages, in order, into "
                  f"{out_file}, one per line.")
        if difficulty >= 2:
            prompt += " Leave out the sponsored listings."
        if difficulty >= 3:
            prompt += " The older pages live in another folder."
        reference = _code("Follow the rel=\"next\" links from page 1, resolving each against the page it's on:",
                          _pages_code())
        if difficulty >= 3:
            bad = [_pages_code(relative=False), _pages_code(sponsored=False)]
        elif difficulty == 2:
            bad = [_pages_code(sponsored=False), _pages_code(follow=False)]
        else:
            bad = [_pages_code(follow=False)]
        reference = reference.replace('"jobs.txt"', repr(out_file))
        bad = [_code(f"This collects the job titles into {out_file}:", b.replace('"jobs.txt"', repr(out_file)))
               for b in bad]
        return draft(self, difficulty, prompt=prompt, check=FileContents(out_file, "\n".join(titles) + "\n"),
                     reference=reference, bad=bad,
                     files=files)


TEMPLATES = (SiteCrawl(), PaginatedJobs())
