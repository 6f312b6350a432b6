#!/usr/bin/env python3
"""The documentation site, checked in a real browser (headless Chromium).

    python3 tools/browser_check.py [HTML_DIR]      (default: build/docs/html)

Run after `./tutorial docs`. Learners read the course as the generated site,
so this opens it as they do (file://, the pages' own scripts running) and
checks:
  - every lesson (chapters/NN_topic/README.md) and exercise page
    (exercises/**/README.md) of a chapter in the site is reachable from the
    main page by following links (what the pages link to, not the side tree);
  - every image on those pages, and on every other page that shows one,
    loads (naturalWidth > 0): charts and figures;
  - no console error (Chromium's SEVERE log entries) on the pages loaded;
  - every fenced code block and every table of a page's Markdown source is
    rendered (as many code fragments and tables as the source has);
  - the number markers show their numbers, not themselves: no visible
    "<!--n", "{n:" or "<!--src:" text in the prose (code aside) of a page
    made from Markdown, and no HTML tag shown as text there;
  - no Markdown shows as text in that prose: no "**", no "*\"" or "\"*" (an
    emphasis Doxygen did not take), no pair of backticks (a code span it
    did not take);
  - no image is wider than the text column (at a 1280-pixel-wide window):
    a wide chart is scaled down, not cut off;
  - no page shows the absolute path of the clone it was built from (an API
    page's include line names a header relative to the repository).
Prints the counts (pages, images, console errors, raw Markdown, over-wide
images) and exits 1 on any failure,
2 on a usage error or when the browser cannot start.

Needs Chromium with its driver and Selenium (Debian/Ubuntu:
apt-get install chromium chromium-driver python3-selenium).
"""
import html.parser
import os
import re
import sys
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def usage(msg):
    print(f"browser_check: {msg}", file=sys.stderr)
    sys.exit(2)


class Links(html.parser.HTMLParser):
    """The local pages an HTML file links to (<a href>), and its <img> sources."""

    def __init__(self):
        super().__init__()
        self.links, self.images = set(), set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            href = a["href"]
            parts = urllib.parse.urlsplit(href)
            if not parts.scheme and parts.path.endswith(".html"):
                self.links.add(urllib.parse.unquote(parts.path))
        elif tag == "img" and a.get("src"):
            self.images.add(a["src"])


def link_graph(html_dir):
    graph, images = {}, {}
    for f in sorted(html_dir.glob("*.html")):
        p = Links()
        p.feed(f.read_text(encoding="utf-8", errors="replace"))
        graph[f.name] = {os.path.normpath(l) for l in p.links}
        images[f.name] = p.images
    return graph, images


def reachable(graph, start):
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt in graph and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def site_markdown():
    """Markdown files in the site -> their page name: README.md is the main
    page; a page with a {#label} is label.html; else md_<path, / as _>.html.
    Chapters not in the site (course.tsv status other than ready) are left out."""
    ready = set()
    for line in (ROOT / "course.tsv").read_text().splitlines():
        cols = line.split("\t")
        if not line.startswith("#") and len(cols) == 4 and cols[2] == "ready":
            ready.add(cols[1])
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    for top in ("chapters", "exercises", "solutions"):
        for md in sorted((ROOT / top).glob("*/**/*.md")):
            if md.relative_to(ROOT / top).parts[0] in ready:
                files.append(md)
    pages = {}
    for md in files:
        rel = md.relative_to(ROOT).as_posix()
        first = md.read_text(encoding="utf-8").split("\n", 1)[0]
        label = re.search(r"\{#([A-Za-z0-9_]+)\}\s*$", first)
        if rel == "README.md":
            pages[rel] = "index.html"
        elif label:
            pages[rel] = label.group(1) + ".html"
        else:
            pages[rel] = "md_" + rel[:-3].replace("/", "_") + ".html"
    return pages


def markdown_counts(md):
    """Fenced code blocks and tables of a Markdown file (outside code blocks)."""
    fences = tables = 0
    in_code = False
    lines = md.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("```") or s.startswith("~~~"):
            if not in_code:
                fences += 1
            in_code = not in_code
            continue
        if in_code:
            continue
        if (s.startswith("|") and i + 1 < len(lines)
                and re.match(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$", lines[i + 1])):
            tables += 1
    return fences, tables


def main(argv):
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        usage("usage: tools/browser_check.py [HTML_DIR] (default build/docs/html)")
    html_dir = Path(argv[0] if argv else ROOT / "build" / "docs" / "html").resolve()
    if not (html_dir / "index.html").is_file():
        usage(f"no {html_dir}/index.html: build the site first (./tutorial docs)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        usage("Selenium is not installed (Debian/Ubuntu: apt-get install python3-selenium chromium chromium-driver)")

    failures = []
    graph, static_images = link_graph(html_dir)
    reach = reachable(graph, "index.html")
    pages = site_markdown()
    for md, page in pages.items():
        lesson = re.match(r"^(chapters/[^/]+|exercises/.+)/README\.md$", md)
        if not (html_dir / page).is_file():
            failures.append(f"{md}: its page {page} is not in the site")
        elif lesson and page not in reach:
            failures.append(f"{md}: its page {page} is not reachable from the main page by links")
    root_path = str(ROOT) + "/"
    absolute = [f.name for f in sorted(html_dir.glob("*.html"))
                if root_path in f.read_text(encoding="utf-8", errors="replace")]
    for name in absolute[:10]:
        failures.append(f"{name}: shows the absolute path {root_path}")
    if len(absolute) > 10:
        failures.append(f"... and {len(absolute) - 10} more pages with the absolute path {root_path}")
    md_pages = {page: md for md, page in pages.items() if (html_dir / page).is_file()}
    # Loaded in the browser: every page made from Markdown, every page that
    # shows an image of its own (beyond Doxygen's footer logo), and one page
    # of each other kind Doxygen makes (its scripts run there too).
    to_load = set(md_pages)
    for name, imgs in static_images.items():
        if any(not src.endswith("doxygen.svg") for src in imgs):
            to_load.add(name)
    for pattern in ("annotated.html", "files.html", "namespaces.html", "class*.html", "struct*.html",
                    "*_source.html", "*_8hpp.html", "*_8cu.html", "dir_*.html", "pages.html"):
        found = sorted(html_dir.glob(pattern))
        if found:
            to_load.add(found[0].name)

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--allow-file-access-from-files", "--window-size=1280,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for binary in ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"):
        if os.path.exists(binary):
            options.binary_location = binary
            break
    driver_path = next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)), None)
    try:
        service = Service(executable_path=driver_path) if driver_path else Service()
        driver = webdriver.Chrome(service=service, options=options)
    except Exception as e:  # noqa: BLE001 (any failure to start is the same answer)
        usage(f"cannot start headless Chromium: {str(e).splitlines()[0]}")
    driver.set_page_load_timeout(60)

    images = broken_images = console_errors = raw_markdown = wide_images = 0
    try:
        for name in sorted(to_load):
            driver.get((html_dir / name).as_uri())
            driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                const pending = Array.from(document.images).filter(i => !i.complete);
                if (!pending.length) return done();
                let left = pending.length;
                const one = () => { if (--left === 0) done(); };
                pending.forEach(i => { i.addEventListener('load', one); i.addEventListener('error', one); });
                setTimeout(done, 10000);""")
            for src, width in driver.execute_script(
                    "return Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth]);"):
                images += 1
                if not width:
                    broken_images += 1
                    failures.append(f"{name}: image {src} does not load")
            # An image wider than the text column that holds it is cut off
            # (or makes the reader scroll sideways).
            for src, shown, column in driver.execute_script("""
                    const c = document.querySelector('div.contents');
                    if (!c) return [];
                    const right = c.getBoundingClientRect().right;
                    return Array.from(c.querySelectorAll('img')).map(i => {
                      const r = i.getBoundingClientRect();
                      return [i.getAttribute('src'), r.right, right];
                    });"""):
                if shown > column + 1:
                    wide_images += 1
                    failures.append(f"{name}: image {src} is wider than the text column (ends at {shown:.0f} px, "
                                    f"the column at {column:.0f} px)")
            for entry in driver.get_log("browser"):
                if entry.get("level") == "SEVERE":
                    console_errors += 1
                    failures.append(f"{name}: console error: {entry.get('message', '')[:300]}")
            if name in md_pages:
                # The prose as shown, without code (a page may quote the
                # marker syntax, or a kernel's banner, in code).
                text = driver.execute_script("""
                    const c = document.querySelector('div.contents') || document.body;
                    const copy = c.cloneNode(true);
                    copy.querySelectorAll('code, pre, div.fragment').forEach(e => e.remove());
                    document.body.appendChild(copy);
                    const t = copy.innerText;
                    copy.remove();
                    return t;""")
                for marker in ("<!--n", "{n:", "<!--src:"):
                    if marker in text:
                        at = text.index(marker)
                        failures.append(f"{name}: a marker shows as text: ...{text[max(0, at - 40):at + 40]!r}...")
                raw = re.search(r"</?(?:p|tt|table|tr|td|th|div|a|b|em|code|pre)(?: [^<>]*)?>", text)
                if raw:
                    at = raw.start()
                    failures.append(f"{name}: HTML shows as text: ...{text[max(0, at - 40):at + 40]!r}...")
                for m in re.finditer(r"\*\*|\*\"|\"\*|`[^`\n]+`", text):
                    raw_markdown += 1
                    at = m.start()
                    failures.append(f"{name}: Markdown shows as text: ...{text[max(0, at - 40):at + 40]!r}...")
                fences, tables = markdown_counts(ROOT / md_pages[name])
                fragments = driver.execute_script("return document.querySelectorAll('div.contents div.fragment').length;")
                shown_tables = driver.execute_script("return document.querySelectorAll('div.contents table.markdownTable').length;")
                if fragments < fences:
                    failures.append(f"{name}: {md_pages[name]} has {fences} code blocks; the page shows {fragments}")
                if shown_tables != tables:
                    failures.append(f"{name}: {md_pages[name]} has {tables} tables; the page shows {shown_tables}")
    finally:
        driver.quit()

    lessons = sum(1 for md in pages if re.match(r"^chapters/[^/]+/README\.md$", md))
    exercises = sum(1 for md in pages if re.match(r"^exercises/.+/README\.md$", md))
    for f in failures:
        print(f"  FAIL  {f}")
    print(f"browser_check: {len(graph)} pages in the site, {len(reach)} reachable from the main page by links; "
          f"{lessons} lessons and {exercises} exercise pages; {len(to_load)} pages loaded in Chromium; "
          f"{images} images ({broken_images} broken, {wide_images} wider than the text column); "
          f"{console_errors} console errors; {raw_markdown} places where Markdown shows as text; "
          f"{len(absolute)} pages with an absolute path; "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
